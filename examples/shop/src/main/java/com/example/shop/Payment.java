package com.example.shop;

/**
 * A payment to take for an order: the payment service's URL, the customer, the order reference and the amount in
 * cents; {@code receipt} is {@code null} until the service has taken it.
 */
public record Payment(String service, long customer, String order, long amount, String receipt) {
  /** This payment, taken, with the service's receipt. */
  public Payment withReceipt(String r) {
    return new Payment(service, customer, order, amount, r);
  }
}
