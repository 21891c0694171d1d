package io.dynnibal.bench.experiment;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Draws recall-versus-training-step curves, one line per series, as a PNG (JFreeChart, headless).
 * Experiment runs leave a picture next to their numbers so a regression in retrieval quality is
 * seen at a glance; the fixed palette gives a series the same colour in every chart with the same
 * legend order, so charts of different runs compare.
 */
public final class RecallPlot {
  static {
    // Experiments run on servers and in CI without a display; AWT reads the property once, on first
    // use.
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
  }

  /**
   * Tableau 10 without its grey, which would vanish into the gridlines; reused in order past 8
   * series.
   */
  private static final Color[] PALETTE = {
    new Color(31, 119, 180), new Color(255, 127, 14), new Color(44, 160, 44),
        new Color(214, 39, 40),
    new Color(148, 103, 189), new Color(140, 86, 75), new Color(227, 119, 194),
        new Color(23, 190, 207),
  };

  private static final Color GRIDLINES = new Color(220, 220, 220);
  private static final BasicStroke LINE = new BasicStroke(2f);
  private static final BasicStroke GRIDLINE =
      new BasicStroke(1f); // JFreeChart's thin dashes vanish in a PNG

  private RecallPlot() {}

  /** One measured point of a curve. */
  public record Point(long step, double value) {}

  /**
   * Writes the chart to {@code png}, creating its directory; the file is replaced in one step,
   * never seen half-written.
   *
   * @param series legend label -> points (in any order; drawn sorted by step); insertion order of
   *     the map = legend order
   * @throws IllegalArgumentException when series is empty, a value is not finite, or width/height <
   *     100
   */
  public static void write(
      Path png,
      String title,
      String yAxisLabel,
      Map<String, List<Point>> series,
      int width,
      int height)
      throws IOException {
    if (width < 100 || height < 100) {
      throw new IllegalArgumentException(
          "a chart needs at least 100x100 pixels, got " + width + "x" + height);
    }
    if (series.isEmpty()) {
      throw new IllegalArgumentException("no series to draw");
    }
    XYSeriesCollection dataset = new XYSeriesCollection();
    for (Map.Entry<String, List<Point>> e : series.entrySet()) {
      XYSeries line = new XYSeries(e.getKey(), true, true);
      for (Point p : e.getValue()) {
        if (!Double.isFinite(p.value())) {
          throw new IllegalArgumentException(
              "series '"
                  + e.getKey()
                  + "' has the non-finite value "
                  + p.value()
                  + " at step "
                  + p.step());
        }
        line.add(p.step(), p.value());
      }
      dataset.addSeries(line);
    }
    JFreeChart chart = chart(title, yAxisLabel, dataset);

    Path target = png.toAbsolutePath();
    Files.createDirectories(target.getParent());
    // Readers polling the directory must never see a half-written PNG. Not Files.createTempFile:
    // its owner-only permissions would carry over to the chart.
    Path tmp = target.resolveSibling(target.getFileName() + "." + UUID.randomUUID() + ".tmp");
    try {
      ChartUtils.saveChartAsPNG(tmp.toFile(), chart, width, height);
      try {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static JFreeChart chart(String title, String yAxisLabel, XYSeriesCollection dataset) {
    NumberAxis x = new NumberAxis("training step");
    x.setStandardTickUnits(NumberAxis.createIntegerTickUnits()); // steps are whole numbers
    x.setAutoRangeIncludesZero(
        false); // a run resumed at a late step should not be squeezed to the right
    NumberAxis y = new NumberAxis(yAxisLabel);

    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
    for (int i = 0; i < dataset.getSeriesCount(); i++) {
      renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
      renderer.setSeriesStroke(i, LINE);
    }

    XYPlot plot = new XYPlot(dataset, x, y, renderer);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(GRIDLINES);
    plot.setRangeGridlinePaint(GRIDLINES);
    plot.setDomainGridlineStroke(GRIDLINE);
    plot.setRangeGridlineStroke(GRIDLINE);

    JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    chart.getLegend().setPosition(RectangleEdge.BOTTOM);
    chart.getLegend().setBackgroundPaint(Color.WHITE);
    return chart;
  }
}
