package org.apiary.drills.netns;

import java.util.List;

/** Makes hosts, prints their prefix and waits to be interrupted (Ctrl-C): the shutdown hook must tear them down. */
public final class NetnsHostsHolder {
  private NetnsHostsHolder() {}

  public static void main(String[] args) throws InterruptedException {
    NetnsHosts hosts = NetnsHosts.create(List.of("x", "y"));
    System.out.println("prefix " + hosts.prefix());
    System.out.flush();
    Thread.sleep(120_000); // bounded: the test interrupts it long before
  }
}
