/**
 * Testing applications: {@link org.apiary.testing.ApiaryExtension}, a JUnit 5 extension that gives a test an embedded
 * Apiary with the application deployed.
 */
package org.apiary.testing;
