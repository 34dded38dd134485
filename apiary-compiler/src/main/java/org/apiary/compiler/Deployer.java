package org.apiary.compiler;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.SystemSchema;

/**
 * Loads a compiled application into a running database: the classes with {@code @UpdateClasses}, then one
 * {@code CREATE PROCEDURE} per new function, and a row per function in Apiary's system table. Redeploying a
 * function with the same partitioning replaces its class in place (VoltDB re-plans its statements) without a
 * database restart; a function whose partitioning changed is dropped and created again.
 */
public final class Deployer {
  private Deployer() {}

  /** Deploys every function of {@code app}. */
  public static void deploy(ApiaryDatabase db, CompiledApplication app) {
    // FunctionCatalog.load creates Apiary's system tables on first use.
    Map<String, FunctionCatalog.Entry> deployed = FunctionCatalog.load(db).entries();
    Set<String> procedures = SystemSchema.procedures(db);
    // A journaled cluster runs a global function as the class that marks its place in every partition's journal.
    boolean journaledCluster = SystemSchema.tables(db).contains(SystemSchema.PARTITIONS);

    List<String> drops = new ArrayList<>();
    List<String> creates = new ArrayList<>();
    for (CompiledFunction f : app.functions()) {
      FunctionCatalog.Entry old = deployed.get(f.name());
      boolean exists = procedures.contains(f.name());
      boolean samePartitioning = old != null && old.kind() == f.kind() && old.keyType() == f.keyType()
          && Objects.equals(old.partitionTable(), f.partitionTable())
          && Objects.equals(old.partitionColumn(), f.partitionColumn());
      if (exists && !samePartitioning) {
        drops.add("DROP PROCEDURE " + f.name() + ";");
      }
      if (!exists || !samePartitioning) {
        creates.add((journaledCluster && f.kind() != FunctionKind.LOCAL
            ? f.createProcedureDdl(ProcedureSource.markedClassName(f.name())) : f.createProcedureDdl()) + ";");
      }
    }
    if (!drops.isEmpty()) {
      db.callAdmin("dropping procedures whose partitioning changed", "@AdHoc", String.join("\n", drops));
    }
    db.callAdmin("loading function classes", "@UpdateClasses", app.jar(), null);
    if (!creates.isEmpty()) {
      db.callAdmin("creating procedures", "@AdHoc", String.join("\n", creates));
    }
    for (CompiledFunction f : app.functions()) {
      db.callAdmin("recording function '" + f.name() + "'", SystemSchema.STORE_FUNCTION,
          f.name(), f.kind().name(), f.keyType() == null ? null : f.keyType().name(), f.partitionTable(),
          f.partitionColumn(), (byte) (f.hasWrites() ? 1 : 0), f.functionClass(), f.procedureClass());
    }
  }
}
