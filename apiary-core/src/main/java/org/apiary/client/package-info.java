/**
 * The client: {@link org.apiary.client.ApiaryClient} calls graphs through one or more frontends over ZeroMQ, with
 * {@link org.apiary.client.ClientConfig} (immutable) and {@link org.apiary.client.InvocationRequest} per call, and
 * returns a {@link org.apiary.client.GraphResult}. Every wait has a timeout; an invocation ID makes a resend safe.
 */
package org.apiary.client;
