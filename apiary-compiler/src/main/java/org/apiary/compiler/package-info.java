/**
 * The function compiler and deployer (schema checks with VoltDB's planner, generated procedures, the procedure jar).
 * Not an API: applications deploy through {@code org.apiary.server.Apiary#deploy} (or {@code apiary deploy}); these
 * classes are public only because Apiary's other modules share them, and they change without notice.
 */
package org.apiary.compiler;
