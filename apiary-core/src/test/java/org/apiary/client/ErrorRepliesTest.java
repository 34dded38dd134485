package org.apiary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apiary.AccessDeniedException;
import org.apiary.ApiaryException;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.InvocationCancelledException;
import org.apiary.InvocationFailedException;
import org.apiary.internal.wire.WireReply;
import org.junit.jupiter.api.Test;

/**
 * Issue 44 item 3: each final error a frontend sends is one exception type at the client, so a caller tells what
 * happened by its type, never by its message (a cancelled and a given-up invocation were both the root type, and the
 * exactly-once drill told them apart by searching the message for "failed with error").
 */
class ErrorRepliesTest {
  @Test
  void eachFinalErrorIsOneType() {
    assertInstanceOf(FunctionFailedException.class,
        ApiaryClient.toException(WireReply.functionFailed("i", "f", "Boom", "it broke")));
    assertInstanceOf(InvalidRequestException.class,
        ApiaryClient.toException(WireReply.error("i", WireReply.INVALID_REQUEST, "unknown graph 'g'")));
    assertInstanceOf(AccessDeniedException.class,
        ApiaryClient.toException(WireReply.error("i", WireReply.FORBIDDEN, "no role")));
    ApiaryException cancelled = ApiaryClient.toException(WireReply.error("i", WireReply.CANCELLED,
        "invocation i was cancelled: not wanted"));
    assertInstanceOf(InvocationCancelledException.class, cancelled);
    assertTrue(cancelled.getMessage().contains("not wanted"), cancelled.getMessage());
    assertInstanceOf(InvocationFailedException.class, ApiaryClient.toException(WireReply.error("i",
        WireReply.INVOCATION_FAILED, "invocation i gave up after 10 attempts")));
    ApiaryException unknown = ApiaryClient.toException(WireReply.error("i", "from-a-newer-frontend", "what"));
    assertEquals(ApiaryException.class, unknown.getClass(), "an error this client does not know is the root");
    assertTrue(unknown.getMessage().contains("from-a-newer-frontend"), unknown.getMessage());
  }
}
