package org.apiary.frontend;

/**
 * An execution stopped before it called the outside world because this frontend's lease lapsed since the execution
 * began ({@link LeaseTerm}): another frontend may run the invocation now. Not the invocation's outcome: the frontend
 * stores nothing for it and tells its clients to ask again.
 */
final class LeaseLapsedException extends RuntimeException {
  LeaseLapsedException(String message) {
    super(message);
  }
}
