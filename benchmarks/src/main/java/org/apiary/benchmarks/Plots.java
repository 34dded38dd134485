package org.apiary.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;

/**
 * Throughput-versus-latency plots (like the paper's Figure 9), one PNG per percentile, series per variant. Only the
 * loads a variant kept up with are drawn (beyond them the latency measures a growing queue, not the system).
 */
final class Plots {
  private Plots() {}

  static List<Path> write(Path dir, String workload, List<VariantRun.Outcome> outcomes)
      throws IOException {
    List<Path> files = new ArrayList<>();
    files.add(plot(dir, workload, "p50", p -> p.all().p50Ms(), outcomes));
    files.add(plot(dir, workload, "p99", p -> p.all().p99Ms(), outcomes));
    return files;
  }

  private static Path plot(Path dir, String workload, String percentile, ToDoubleFunction<OpenLoop.Point> latency,
                           List<VariantRun.Outcome> outcomes) throws IOException {
    XYChart chart = new XYChartBuilder().width(900).height(560)
        .title(workload + ": " + percentile + " latency versus achieved throughput (open loop)")
        .xAxisTitle("achieved throughput (requests/s)").yAxisTitle(percentile + " latency (ms, log scale)").build();
    chart.getStyler().setYAxisLogarithmic(true);
    chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
    chart.getStyler().setMarkerSize(6);
    for (VariantRun.Outcome o : outcomes) {
      List<OpenLoop.Point> points = java.util.stream.Stream.concat(o.fixed().stream(), o.sweep().stream())
          .filter(p -> p.all().count() > 0 && p.errors() == 0
              && p.achieved() >= BenchmarkReport.SUSTAINED_SHARE * p.offered())
          .sorted(Comparator.comparingDouble(OpenLoop.Point::offered)).toList();
      if (points.isEmpty()) {
        continue;
      }
      double[] x = points.stream().mapToDouble(OpenLoop.Point::achieved).toArray();
      double[] y = points.stream().mapToDouble(p -> Math.max(0.01, latency.applyAsDouble(p))).toArray();
      chart.addSeries(o.variant(), x, y);
    }
    Path file = dir.resolve(workload + "-" + percentile + ".png");
    if (chart.getSeriesMap().isEmpty()) {
      chart.addSeries("no data", new double[] {0}, new double[] {1});
    }
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    return file;
  }
}
