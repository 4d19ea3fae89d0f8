import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.lang.ref.WeakReference;

/**
 * A class of a class loader the program drops must unload, traced or not: the recorder's tables
 * must not hold it (Tracer's tables of the methods' own and usual classes take only classes of the
 * boot, platform and application loaders, and the threads' caches of receivers' classes are emptied
 * now and then). Main defines Main$Plugin and Main$Plugin2 afresh in a loader of its own, calls
 * their instance methods (receivers of the method's own class, and of a subclass that inherits it:
 * the probes' fast and slow paths, and a plugin class as the first receiver of another class's
 * method seen, which Tracer's table of usual receivers must not keep; and methods of
 * java.lang.Object on them), drops the loader and collects until it is gone. Prints "unloaded" or
 * "kept"; the agent of commit 869c77a kept it, pinned by the cache of the last receiver's class.
 */
public class Main {
    public static class Plugin2 extends Plugin {
    }

    public static class Plugin {
        private int n;

        public int bump() {
            return ++n;
        }

        public int twice() {
            return bump() + bump();
        }
    }

    static final class Isolated extends ClassLoader {
        Isolated() {
            super(null);
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            if (!name.startsWith("Main$Plugin")) {
                throw new ClassNotFoundException(name);
            }
            try (InputStream in = Main.class.getResourceAsStream(name + ".class")) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                in.transferTo(out);
                byte[] b = out.toByteArray();
                return defineClass(name, b, 0, b.length);
            } catch (java.io.IOException e) {
                throw new ClassNotFoundException(name, e);
            }
        }
    }

    static WeakReference<ClassLoader> useAndDrop() throws Exception {
        ClassLoader loader = new Isolated();
        int sum = 0;
        for (String name : new String[] {"Main$Plugin", "Main$Plugin2"}) {
            Class<?> c = loader.loadClass(name);
            Object p = c.getConstructor().newInstance();
            for (int i = 0; i < 3; i++) {
                sum += (Integer) c.getMethod("twice").invoke(p);
                // Object.equals (a leaf) and Object.toString, inherited: JDK methods, a plugin receiver
                if (!p.equals(p) || p.toString().isEmpty()) {
                    sum = -1;
                }
            }
        }
        System.out.println("sum " + sum);
        return new WeakReference<>(loader);
    }

    public static void main(String[] args) throws Exception {
        WeakReference<ClassLoader> ref = useAndDrop();
        // Other receivers after the plugin's, so that no one-entry cache of the last receiver's
        // class still names it.
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 100 && ref.get() != null; i++) {
            sb.setLength(0);
            sb.append(i);
            System.gc();
            Thread.sleep(10);
        }
        System.out.println(ref.get() == null ? "unloaded" : "kept");
    }
}
