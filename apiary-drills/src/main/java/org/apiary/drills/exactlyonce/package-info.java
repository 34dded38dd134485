/**
 * The application the exactly-once drill runs (writers, observers and functions that fail on purpose). Not an API:
 * it changes without notice.
 */
package org.apiary.drills.exactlyonce;
