/**
 * The counter application (one function that increments a counter): the load of the frontend-crash, overload and
 * garbage drills. Not an API: it changes without notice.
 */
package org.apiary.drills.counter;
