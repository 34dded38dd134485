package org.apiary.provenance;

import java.time.Duration;

/**
 * A snapshot of a {@link ProvenanceSpooler}'s counters. Every row that entered the spooler is loaded, waiting in
 * memory, waiting on disk, lost to damage on disk, or dropped because it could be kept neither in memory nor on disk:
 * {@code rowsOffered + rowsRecovered == rowsLoaded + rowsInMemory + rowsOnDisk + rowsDamaged + rowsDropped}.
 *
 * @param rowsOffered rows accepted by {@link ProvenanceSpooler#offer} since start
 * @param rowsRecovered rows found in spill files left by an earlier spooler when this one started
 * @param rowsLoaded rows whose load transaction committed (rows skipped because their key was present count too)
 * @param rowsSpilled rows written to spill files since start (while memory was full, and at close)
 * @param rowsInMemory rows waiting in memory
 * @param rowsOnDisk rows waiting in spill files
 * @param rowsDamaged rows offered or recovered here that were lost because their spill file was damaged before they
 *     were loaded (damage found when the spooler starts is logged and reported in {@code lastError}, and those rows
 *     are not counted in {@code rowsRecovered})
 * @param rowsSetAside rows found in spill files at start whose execution is not known to have committed, moved to
 *     {@code unconfirmed-*.spill} files and not loaded (see {@link SpoolerConfig.Recovery}); not counted in
 *     {@code rowsRecovered}
 * @param failedLoadAttempts attempts that failed: connecting, creating a table, or loading a batch
 * @param batchesLoaded load transactions that committed (one per table of a batch); {@code rowsLoaded} over this is
 *     the rows per load, which decides most of the loader's CPU (a load's fixed cost in the sink is about 1 ms of CPU)
 * @param rowsDropped rows offered that were dropped: memory held {@link SpoolerConfig#maxMemoryRows()} rows and no
 *     spill file could be written (the disk refused it, or its volume was below
 *     {@link SpoolerConfig#diskReserveBytes()}); capture paused while this grew, and {@code lastError} says why
 * @param lastError the message of the last failure or stall (for example a spill file waiting for its table to be
 *     registered), or {@code null} if there was none
 * @param bytesOnDisk bytes of the spill files holding the rows waiting on disk
 * @param oldestWaiting how long the oldest row not yet loaded has waited since it was offered ({@link Duration#ZERO}
 *     when none waits); for rows recovered from an earlier spooler's spill file, since that file was last written
 * @param sinkReachable whether the last attempt to open the sink and load into it succeeded: {@code false} from a
 *     failed attempt (the sink could not be reached, or refused a load) until a load commits again, {@code null}
 *     before the first attempt
 */
public record SpoolerStats(long rowsOffered, long rowsRecovered, long rowsLoaded, long rowsSpilled,
                           long rowsInMemory, long rowsOnDisk, long rowsDamaged, long rowsSetAside,
                           long failedLoadAttempts, long batchesLoaded, long rowsDropped, String lastError,
                           long bytesOnDisk, Duration oldestWaiting, Boolean sinkReachable) {
}
