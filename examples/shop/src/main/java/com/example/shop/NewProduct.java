package com.example.shop;

/** A product to add: its name, price (in cents) and how many are in stock. */
public record NewProduct(String name, long price, long stock) {}
