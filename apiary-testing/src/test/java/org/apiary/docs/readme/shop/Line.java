package org.apiary.docs.readme.shop;

/**
 * One line of an order: the client's order reference, a product, how many, and (once reserved) the line's total
 * price in cents.
 */
public record Line(String order, long customer, long product, long quantity, long total) {}
