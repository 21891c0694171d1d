package io.dynnibal.bench.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.bench.experiment.RecallPlot.Point;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecallPlotTest {
  @TempDir Path dir;

  private static Map<String, List<Point>> threeSeries() {
    Map<String, List<Point>> series = new LinkedHashMap<>();
    series.put("recall@10", List.of(new Point(200, 0.55), new Point(0, 0.2), new Point(100, 0.4)));
    series.put("recall@50", List.of(new Point(0, 0.35), new Point(100, 0.6), new Point(200, 0.75)));
    series.put(
        "recall@100", List.of(new Point(0, 0.5), new Point(100, 0.72), new Point(200, 0.86)));
    return series;
  }

  @Test
  void drawsOneColouredLinePerSeries() throws Exception {
    Path png = dir.resolve("plots/recall.png");
    RecallPlot.write(png, "Recall", "recall", threeSeries(), 640, 400);

    BufferedImage image = ImageIO.read(png.toFile());
    assertEquals(640, image.getWidth());
    assertEquals(400, image.getHeight());
    // Anti-aliasing blends each line with the white background into many RGB values of one hue, so
    // count hues. The legend swatches alone give about 50 pixels a hue; the lines give several
    // hundred.
    int[] pixelsPerHue = new int[12];
    for (int py = 0; py < image.getHeight(); py++) {
      for (int px = 0; px < image.getWidth(); px++) {
        int rgb = image.getRGB(px, py);
        float[] hsb = Color.RGBtoHSB((rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff, null);
        if (hsb[1] > 0.5f && hsb[2] > 0.3f) {
          pixelsPerHue[(int) (hsb[0] * 12) % 12]++;
        }
      }
    }
    long hues = Arrays.stream(pixelsPerHue).filter(n -> n >= 300).count();
    assertTrue(
        hues >= 3, "expected 3 line colours, pixels per hue: " + Arrays.toString(pixelsPerHue));
  }

  @Test
  void replacesAnExistingChartWithoutLeavingTemporaryFiles() throws Exception {
    Path png = dir.resolve("recall.png");
    Files.writeString(png, "stale");
    RecallPlot.write(png, "Recall", "recall", threeSeries(), 320, 200);

    assertEquals(320, ImageIO.read(png.toFile()).getWidth());
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(png), files.toList());
    }
  }

  @Test
  void refusesAnEmptySeriesMap() {
    assertThrows(
        IllegalArgumentException.class,
        () -> RecallPlot.write(dir.resolve("r.png"), "Recall", "recall", Map.of(), 640, 400));
  }

  @Test
  void refusesANonFiniteValueAndNamesItsSeries() {
    Map<String, List<Point>> series = threeSeries();
    series.put("recall@5", List.of(new Point(0, 0.1), new Point(100, Double.NaN)));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> RecallPlot.write(dir.resolve("r.png"), "Recall", "recall", series, 640, 400));
    assertTrue(e.getMessage().contains("recall@5"), e.getMessage());
  }
}
