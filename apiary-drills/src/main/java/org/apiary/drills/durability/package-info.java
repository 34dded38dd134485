/** The durability drill's application ({@link org.apiary.drills.durability.DurabilityApp}). */
package org.apiary.drills.durability;
