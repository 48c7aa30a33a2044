package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Hadamard response, "hr" (Acharya, Sun, Zhang, AISTATS 2019; {@code dpdist.local.frequency.hadamard}).  B blocks of b
 * outputs (K = bB); item x in block i at column j = (x mod (b-1)) + 1 owns the b/2 outputs
 * C_x = {i b + r : popcount(r &amp; j) even}.  The report is a mixture: with probability lambda a uniform element of C_x
 * (uniform r in [b], then flip the lowest set bit of j in r when r is outside the set: a bijection), otherwise a
 * uniform output of [K].  The design (B, b) is chosen exactly as in Python; lambda is on the 2^-53 grid.
 */
public final class HR extends FrequencyProtocol {
    /** an int64 count per output, up to 2 outputs per item (Python's HR._bytes_per_item). */
    @Override
    protected int bytesPerItem() {
        return 16;
    }

    public static final String PROTOCOL = "hr";

    public final int blocks;
    public final int blockSize;
    public final int outputSize;
    public final double keep;

    public HR(Map<String, Object> config) {
        super(PROTOCOL, config, Params.frequencyRules(), Params.defaults("labels", null));
        int d = domainSize();
        double e = Libm.exp(epsilon());
        double largest = e > 2.0 ? Math.scalb(1.0, Libm.ceilLog2(Math.min(e, 2.0 * d)) - 1) : 1;
        double[] best = null;
        for (int power = 0; Math.scalb(1.0, power) <= largest; power++) {
            double[] design = blockDesign(d, e, Math.scalb(1.0, power));
            if (best == null || design[2] < best[2]) best = design; // Python's min: first minimum wins
        }
        this.blocks = (int) best[0];
        this.blockSize = (int) best[1];
        this.outputSize = blockSize * blocks;
        this.keep = Grid.mixtureKeep(epsilon(), blockSize / 2, outputSize);
        this.format = ReportFormat.itemReports(outputSize);
    }

    /** {@code _block_design} of hadamard.py: {blocks, block_size, variance at f = 0}. */
    private static double[] blockDesign(int d, double e, double blocks) {
        double blockSize = Math.scalb(1.0, Libm.ceilLog2(d / blocks + 1));
        double used = Math.min(blocks, Math.ceil(d / (blockSize - 1)));
        double normalizer = (blockSize / 2) * e + blockSize * used - blockSize / 2;
        double kappa = (2 * normalizer) / (blockSize * (e - 1));
        double share = Math.min(1.0, (blockSize - 1) / d);
        double inBlock = ((((share * blockSize) / 2) * (e + 1)) + (1 - share) * blockSize) / normalizer;
        return new double[] {used, blockSize, kappa * kappa * inBlock};
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("blocks", (long) blocks, "blockSize", (long) blockSize, "outputSize", (long) outputSize, "keep", keep);
    }

    private boolean inSet(int item, int output) {
        int b = blockSize;
        int block = item / (b - 1);
        int column = (item % (b - 1)) + 1;
        return output / b == block && Integer.bitCount((output % b) & column) % 2 == 0;
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        // both branches' draws and arithmetic happen either way: the work must not tell whether it kept the item
        boolean kept = source.bernoulli(keep);
        int b = blockSize;
        int column = (item % (b - 1)) + 1;
        int row = (int) source.uniformInt(b);
        if (Integer.bitCount(row & column) % 2 != 0) row ^= column & -column;
        int near = (item / (b - 1)) * b + row;
        long other = source.uniformInt(outputSize);
        format.write(bytes, offset, 0, kept ? near : other);
    }

    /** Exact law over the K outputs: lambda Unif(C_x) + (1 - lambda) Unif[K]. */
    @Override
    public double[] channelRow(int item) {
        double half = blockSize / 2.0;
        double[] row = new double[outputSize];
        for (int y = 0; y < outputSize; y++) row[y] = (inSet(item, y) ? keep / half : 0) + (1 - keep) / outputSize;
        return row;
    }

    @Override
    public long reportIndex(byte[] row) {
        return format.read(row, 0, 0);
    }

    @Override
    public long statisticSize() {
        return outputSize;
    }
}
