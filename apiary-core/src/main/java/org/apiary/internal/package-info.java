/**
 * Apiary's runtime plumbing shared by the SDK, the generated stored procedures and the callers. Not an API:
 * application code must not use it, and it changes without notice.
 */
package org.apiary.internal;
