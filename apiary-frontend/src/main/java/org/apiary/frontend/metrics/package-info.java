/** Meters that frontends and the console share (issue 43); runtime, not an API. */
package org.apiary.frontend.metrics;
