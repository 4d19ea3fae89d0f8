/**
 * Exception paths for the replay oracle (tests/oracle): an exception caught in the frame that
 * throws it (explicitly and implicitly thrown), caught several frames up, rethrown from a catch
 * block (wrapped, and the same object), thrown from a finally block (replacing the exception in
 * flight), caught by an outer frame of the same recursive method where only that frame's try is
 * active, try-with-resources with a failing body and a failing close, exceptions leaving
 * synchronized blocks and synchronized methods, a JDK method's exception caught two frames up, and
 * a constructor that throws.
 *
 * dive(4, 3) is the recursion: frames n = 4, 3, 2, 1, 0; n = 0 throws, n = 3 catches (its try is
 * the only active one) and returns 103, so dive(4, 3) = 104.
 */
public class Main {
    static final StringBuilder log = new StringBuilder();
    static final Object lock = new Object();

    static int sameFrame(int x) {
        try {
            if (x > 0) {
                throw new IllegalArgumentException("positive " + x);
            }
            return x;
        } catch (IllegalArgumentException e) {
            return -x;
        }
    }

    static int sameFrameImplicit(int[] a, int i) {
        try {
            return a[i];
        } catch (ArrayIndexOutOfBoundsException e) {
            return -1;
        }
    }

    static void deep3(int n) {
        if (n % 3 == 0) {
            throw new IllegalStateException("deep " + n);
        }
        log.append('d');
    }

    static void deep2(int n) {
        deep3(n);
        log.append('2');
    }

    static void deep1(int n) {
        try {
            deep2(n);
        } finally {
            log.append('f');
        }
    }

    static void rethrowWrapped(int n) {
        try {
            deep1(n);
        } catch (IllegalStateException e) {
            log.append('r');
            throw new RuntimeException("wrapped " + n, e);
        }
    }

    static void rethrowSame(int n) {
        try {
            deep2(n);
        } catch (IllegalStateException e) {
            log.append('s');
            throw e;
        }
    }

    static void throwFromFinally(boolean fail) {
        try {
            if (fail) {
                throw new IllegalStateException("body");
            }
            log.append('b');
        } finally {
            log.append('F');
            if (fail) {
                throw new UnsupportedOperationException("from finally");
            }
        }
    }

    static int dive(int n, int catchAt) {
        if (n == 0) {
            throw new ArithmeticException("bottom");
        }
        if (n == catchAt) {
            try {
                return dive(n - 1, catchAt);
            } catch (ArithmeticException e) {
                return 100 + n;
            }
        }
        return dive(n - 1, catchAt) + 1;
    }

    static final class Res implements AutoCloseable {
        final String name;
        final boolean failClose;

        Res(String name, boolean failClose) {
            this.name = name;
            this.failClose = failClose;
        }

        @Override
        public void close() {
            log.append('c').append(name);
            if (failClose) {
                throw new IllegalStateException("close " + name);
            }
        }
    }

    static String withResources(int mode) {
        try (Res a = new Res("a", mode == 2); Res b = new Res("b", mode == 3)) {
            if (mode == 1 || mode == 2) {
                throw new IllegalArgumentException("body " + mode);
            }
            return "ok " + a.name + b.name;
        }
    }

    static int inSync(int n) {
        synchronized (lock) {
            if (n % 2 == 1) {
                throw new IllegalStateException("odd in sync " + n);
            }
            return n;
        }
    }

    static int syncCatchInside(int n) {
        synchronized (lock) {
            try {
                return inSync(n);
            } catch (IllegalStateException e) {
                return -n;
            }
        }
    }

    static synchronized void syncMethod(int n) {
        if (n == 1) {
            throw new IllegalArgumentException("sync method " + n);
        }
        log.append('m');
    }

    static void nestedSync(int n) {
        synchronized (lock) {
            synchronized (log) {
                deep3(n);
            }
        }
    }

    static int parse(String s) {
        return Integer.parseInt(s);
    }

    static int parseOr(String s, int fallback) {
        try {
            return parse(s);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    static final class Checked {
        final int value;

        Checked(int value) {
            if (value < 0) {
                throw new IllegalArgumentException("negative " + value);
            }
            this.value = value;
        }
    }

    public static void main(String[] args) {
        System.out.println("sameFrame: " + sameFrame(0) + " " + sameFrame(5));
        int[] a = {7, 8};
        System.out.println("sameFrameImplicit: " + sameFrameImplicit(a, 1) + " " + sameFrameImplicit(a, 2));
        for (int n = 1; n <= 3; n++) {
            try {
                rethrowWrapped(n);
                System.out.println("rethrowWrapped(" + n + ") returned");
            } catch (RuntimeException e) {
                System.out.println("rethrowWrapped(" + n + ") threw " + e.getMessage() + " / " + e.getCause().getMessage());
            }
        }
        try {
            rethrowSame(6);
        } catch (IllegalStateException e) {
            System.out.println("rethrowSame threw " + e.getMessage());
        }
        for (boolean fail : new boolean[] {false, true}) {
            try {
                throwFromFinally(fail);
                System.out.println("throwFromFinally(" + fail + ") returned");
            } catch (RuntimeException e) {
                System.out.println("throwFromFinally(" + fail + ") threw " + e.getClass().getSimpleName());
            }
        }
        System.out.println("dive(4, 3) = " + dive(4, 3));
        System.out.println("dive(3, 1) = " + dive(3, 1));
        for (int mode = 0; mode < 4; mode++) {
            try {
                System.out.println("withResources(" + mode + ") = " + withResources(mode));
            } catch (RuntimeException e) {
                System.out.println("withResources(" + mode + ") threw " + e.getMessage()
                        + " suppressed " + e.getSuppressed().length);
            }
        }
        System.out.println("syncCatchInside: " + syncCatchInside(2) + " " + syncCatchInside(3));
        for (int n = 0; n < 3; n++) {
            try {
                syncMethod(n);
            } catch (IllegalArgumentException e) {
                System.out.println("syncMethod threw " + e.getMessage());
            }
        }
        try {
            nestedSync(3);
        } catch (IllegalStateException e) {
            System.out.println("nestedSync threw " + e.getMessage() + ", lock free: " + !Thread.holdsLock(lock));
        }
        System.out.println("parseOr: " + parseOr("12", -1) + " " + parseOr("x", -1));
        for (int v : new int[] {1, -1}) {
            try {
                System.out.println("Checked " + new Checked(v).value);
            } catch (IllegalArgumentException e) {
                System.out.println("Checked threw " + e.getMessage());
            }
        }
        System.out.println("log " + log);
    }
}
