/**
 * The durability drill's application ({@link org.apiary.drills.durability.DurabilityApp}): single-partition,
 * multi-partition and failing writes. Not an API: it changes without notice.
 */
package org.apiary.drills.durability;
