package org.apiary.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's memory as a soak reports it: the Java heap after a garbage collection (what is live, not what
 * garbage happens to wait) and the resident set, which also counts VoltDB's tables (they live outside the heap).
 */
final class ProcessMemory {
  private ProcessMemory() {}

  /** Heap in use after the most recent collection of any collector, or the heap in use now if none ran yet. */
  static long heapAfterLastGcBytes() {
    long latestEnd = -1;
    long used = -1;
    for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc instanceof com.sun.management.GarbageCollectorMXBean sun && sun.getLastGcInfo() != null
          && sun.getLastGcInfo().getEndTime() > latestEnd) {
        var info = sun.getLastGcInfo();
        latestEnd = info.getEndTime();
        used = 0;
        for (var pool : ManagementFactory.getMemoryPoolMXBeans()) {
          MemoryUsage after = info.getMemoryUsageAfterGc().get(pool.getName());
          if (after != null && pool.getType() == java.lang.management.MemoryType.HEAP) {
            used += after.getUsed();
          }
        }
      }
    }
    return used >= 0 ? used : ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Heap in use right after a full collection this call asks for (use only outside measured windows). */
  static long heapAfterFullGcBytes() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Resident memory of this process (Linux {@code VmRSS}), or -1 where {@code /proc} cannot say. */
  static long residentBytes() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024L;
        }
      }
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
    return -1;
  }
}
