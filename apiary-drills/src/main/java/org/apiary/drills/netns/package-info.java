/**
 * Hosts with addresses of their own on one Linux machine ({@link org.apiary.drills.netns.NetnsHosts}): a network
 * namespace per host on one bridge, addresses from 198.18.0.0/15, links that can be cut and healed; for running a
 * VoltDB cluster, frontends and clients as separate hosts with their real configuration. Needs root. Not an API.
 */
package org.apiary.drills.netns;
