/**
 * A matrix product: an inner loop entered on every step of the loop around it, so that the loop
 * probes' first-step path (Tracer.loopMark's call of ThreadTrace.mark) is rare at its call site,
 * where C2 may refuse to inline a call (tests/agent/test_probe_inlining.py). The printed element
 * is fixed: c[100][66] of a[i][k] = i + k times b[k][j] = k - j, n = 200. The inner loop runs
 * 200 steps a time, so a first step is one loop probe's call in 200 or more: JDK 25's C2 refuses
 * to inline a call that rare (MinInlineFrequencyRatio, 0.0085) unless told to.
 */
public class Main {
    static double product(int n) {
        double[][] a = new double[n][n], b = new double[n][n], c = new double[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                a[i][j] = i + j;
                b[i][j] = i - j;
            }
        }
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < n; k++) {
                double x = a[i][k];
                for (int j = 0; j < n; j++) {
                    c[i][j] += x * b[k][j];
                }
            }
        }
        return c[n / 2][n / 3];
    }

    public static void main(String[] args) {
        double last = 0;
        for (int r = 0; r < 12; r++) {
            last = product(200);
        }
        System.out.println("c " + (long) last);
    }
}
