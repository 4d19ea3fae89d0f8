import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Class loaders that write down every name they are asked for and refuse the names they do not
 * serve: the recorder must not make them load anything (its runtime classes, through the
 * constant pool of an instrumented class), so the traced run prints the same lists and does not
 * fail with NoClassDefFoundError. One loader overrides loadClass(String), which the JVM calls
 * itself, the other loadClass(String, boolean).
 */
public class Main {
    static byte[] bytesOf(String name) throws IOException {
        try (InputStream in = Main.class.getResourceAsStream("/" + name + ".class")) {
            return in.readAllBytes();
        }
    }

    /** Serves Task itself; java.* from the parent; refuses every other name. */
    static final class OneArg extends ClassLoader {
        final List<String> asked = new ArrayList<>();

        OneArg() {
            super("one-arg", Main.class.getClassLoader());
        }

        @Override
        public Class<?> loadClass(String name) throws ClassNotFoundException {
            asked.add(name);
            if (name.equals("Task")) {
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c != null) {
                        return c;
                    }
                    try {
                        byte[] b = bytesOf(name);
                        return defineClass(name, b, 0, b.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
            }
            if (name.startsWith("java.")) {
                return super.loadClass(name);
            }
            throw new ClassNotFoundException("one-arg refuses " + name);
        }
    }

    /** The same, overriding loadClass(String, boolean). */
    static final class TwoArg extends ClassLoader {
        final List<String> asked = new ArrayList<>();

        TwoArg() {
            super("two-arg", Main.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            asked.add(name);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null && name.equals("Task")) {
                    try {
                        byte[] b = bytesOf(name);
                        c = defineClass(name, b, 0, b.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                if (c == null && name.startsWith("java.")) {
                    c = super.loadClass(name, false);
                }
                if (c == null) {
                    throw new ClassNotFoundException("two-arg refuses " + name);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }

    static void run(ClassLoader loader, List<String> asked) throws Exception {
        Runnable task = (Runnable) Class.forName("Task", true, loader).getDeclaredConstructor().newInstance();
        task.run();
        task.run();
        System.out.println(loader.getName() + " was asked for " + asked);
    }

    public static void main(String[] args) throws Exception {
        OneArg one = new OneArg();
        run(one, one.asked);
        TwoArg two = new TwoArg();
        run(two, two.asked);
    }
}
