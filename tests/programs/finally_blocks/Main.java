/**
 * finally blocks on the normal, the returning and the exceptional path.
 *
 * Counts the recorder tests rely on: guarded(mode) is called 3 times (modes 0, 1, 2) and leaves
 * by an exception once (mode 1); its finally block runs all 3 times.
 */
public class Main {
    static int finallyRuns;

    static int guarded(int mode) {
        try {
            if (mode == 0) {
                return 10;
            }
            if (mode == 1) {
                throw new IllegalArgumentException("mode " + mode);
            }
            return 20;
        } finally {
            finallyRuns++;
            System.out.println("  finally of guarded(" + mode + ")");
        }
    }

    @SuppressWarnings("finally")
    static int overrides() {
        try {
            throw new RuntimeException("dropped");
        } finally {
            return 99;
        }
    }

    static String nested(int mode) {
        StringBuilder path = new StringBuilder();
        try {
            try {
                path.append("a");
                if (mode == 1) {
                    throw new IllegalStateException("inner");
                }
                path.append("b");
            } finally {
                path.append("F1");
            }
            path.append("c");
        } catch (IllegalStateException e) {
            path.append("C");
        } finally {
            path.append("F2");
        }
        return path.toString();
    }

    static String loop() {
        StringBuilder path = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            try {
                if (i == 1) {
                    continue;
                }
                if (i == 3) {
                    break;
                }
                path.append(i);
            } finally {
                path.append('f');
            }
        }
        return path.toString();
    }

    static final class Resource implements AutoCloseable {
        final String name;
        final boolean failOnClose;

        Resource(String name, boolean failOnClose) {
            this.name = name;
            this.failOnClose = failOnClose;
            System.out.println("  open " + name);
        }

        @Override
        public void close() {
            System.out.println("  close " + name);
            if (failOnClose) {
                throw new IllegalStateException("close failed: " + name);
            }
        }
    }

    static void resources(boolean failInBody) {
        try (Resource a = new Resource("a", false); Resource b = new Resource("b", true)) {
            System.out.println("  body with " + a.name + b.name);
            if (failInBody) {
                throw new RuntimeException("body failed");
            }
        }
    }

    public static void main(String[] args) {
        for (int mode = 0; mode < 3; mode++) {
            try {
                System.out.println("guarded(" + mode + ") = " + guarded(mode));
            } catch (IllegalArgumentException e) {
                System.out.println("guarded(" + mode + ") threw " + e.getMessage());
            }
        }
        System.out.println("finally ran " + finallyRuns + " times");
        System.out.println("overrides() = " + overrides());
        System.out.println("nested(0) = " + nested(0));
        System.out.println("nested(1) = " + nested(1));
        System.out.println("loop() = " + loop());
        for (boolean fail : new boolean[] {false, true}) {
            try {
                resources(fail);
            } catch (RuntimeException e) {
                StringBuilder suppressed = new StringBuilder();
                for (Throwable s : e.getSuppressed()) {
                    suppressed.append(" [suppressed ").append(s.getMessage()).append(']');
                }
                System.out.println("resources(" + fail + ") threw " + e.getMessage() + suppressed);
            }
        }
    }
}
