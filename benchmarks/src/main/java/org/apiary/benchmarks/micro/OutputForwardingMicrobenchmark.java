package org.apiary.benchmarks.micro;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apiary.benchmarks.retwis.RecentPosts;
import org.apiary.internal.FunctionOutputs;
import org.apiary.internal.Json;
import org.apiary.internal.Output;
import org.apiary.internal.wire.WireReply;

/**
 * What one function's outputs cost on their way to the client, in two places. On the site: turning the value the
 * function returned into its encoded outputs, through a tree ({@code Json.tree}, before) or written once
 * ({@link Json#output}). On the frontend's thread: decoding them as they come back from the procedure, then writing
 * them into the reply, every value parsed into a tree (before) or arrays and objects kept as their bytes
 * ({@link FunctionOutputs#decodeForwarding}). The outputs are a Retwis timeline's fan-out result, ten posts of one
 * author. The figures are this thread's CPU in microseconds per function result, per round.
 *
 * <pre>java -cp ... org.apiary.benchmarks.micro.OutputForwardingMicrobenchmark [results per round] [rounds]</pre>
 */
public final class OutputForwardingMicrobenchmark {
  private OutputForwardingMicrobenchmark() {}

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    List<RecentPosts.PostView> posts = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      posts.add(new RecentPosts.PostView(4711, 1_000_000L + i, 1_790_000_000_000L + i,
          "post number " + i + " of this author, with some text in it, as a timeline shows"));
    }
    byte[] outputs = FunctionOutputs.encode(List.of(new Output("posts", null, Json.tree(posts))));
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    System.out.printf(Locale.ROOT, "%d bytes of outputs per result, %d results per round%n", outputs.length, n);
    for (int round = 0; round < rounds; round++) {
      for (boolean once : new boolean[] {false, true}) {
        long sink = 0;
        long start = threads.getCurrentThreadCpuTime();
        for (int i = 0; i < n; i++) {
          sink += FunctionOutputs.encode(List.of(new Output("posts", null,
              once ? Json.output(posts) : Json.tree(posts)))).length;
        }
        double us = (threads.getCurrentThreadCpuTime() - start) / 1000.0 / n;
        System.out.printf(Locale.ROOT, "round %d site     %-10s %6.2f us per result (%d bytes)%n", round + 1,
            once ? "once" : "tree", us, sink / n);
      }
      for (boolean forwarding : new boolean[] {false, true}) {
        long sink = 0;
        long start = threads.getCurrentThreadCpuTime();
        for (int i = 0; i < n; i++) {
          List<Output> decoded = forwarding ? FunctionOutputs.decodeForwarding(outputs) : FunctionOutputs.decode(outputs);
          sink += WireReply.ok("id-" + i, decoded).toBytes().length;
        }
        double us = (threads.getCurrentThreadCpuTime() - start) / 1000.0 / n;
        System.out.printf(Locale.ROOT, "round %d frontend %-10s %6.2f us per result (%d bytes)%n", round + 1,
            forwarding ? "forwarded" : "trees", us, sink / n);
      }
    }
  }
}
