/**
 * Algorithm 1 of the paper (which functions of a graph must record their outputs), run when a graph is registered.
 * Not an API: it changes without notice.
 */
package org.apiary.frontend.graph;
