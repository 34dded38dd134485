package org.apiary.docs.readme.shop;

/** Some items of a product, put into a cart. */
public record CartItem(long product, long quantity) {}
