/**
 * A daemon thread spinning in tight loops (loop records, with a static leaf's call) while the
 * program ends: by an uncaught exception left from a loop in main (no argument), or by
 * System.exit(3) (argument "exit"); a second argument starts that many daemons. The final flush
 * takes the daemons' buffers while they are still storing records into them
 * (tests/recorder/test_loop_records.py).
 */
public class Main {
    static final int[] DATA = new int[1000];

    static int mix(int h, int v) {
        return (h ^ v) * 0x9E3779B1;
    }

    static long spin() {
        long s = 0;
        for (int r = 0; r >= 0; r++) {
            for (int i = 0; i < DATA.length; i++) {
                s += DATA[i];
            }
            int h = r;
            for (int i = 0; i < 100; i++) {
                h = mix(h, i);
            }
            s += h;
        }
        return s;
    }

    static int overrun(int[] a) {
        int s = 0;
        for (int i = 0; i <= a.length; i++) {
            s += a[i];
        }
        return s;
    }

    /** {@code [exit|throw [SPINNERS]]}: how the program ends (default: the exception), how many daemons spin (default 1). */
    public static void main(String[] args) throws Exception {
        int spinners = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        for (int k = 0; k < spinners; k++) {
            Thread spinner = new Thread(Main::spin, k == 0 ? "spinner" : "spinner" + k);
            spinner.setDaemon(true);
            spinner.start();
        }
        Thread.sleep(100);
        if (args.length > 0 && args[0].equals("exit")) {
            System.exit(3);
        }
        overrun(new int[5]);
    }
}
