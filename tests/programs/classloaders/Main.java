import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;

/**
 * Custom class loaders that define classes from bytes: two loaders define the same class name
 * (Plugin) from the same bytes, giving two distinct classes; a hidden class is defined from bytes
 * through a Lookup.
 *
 * Counts the recorder tests rely on: Plugin.greet runs 2 times in the class defined by loader-A
 * and 3 times in the one defined by loader-B.
 */
public class Main {
    /** Defines Plugin itself from bytes; delegates every other name to its parent. */
    static final class ByteLoader extends ClassLoader {
        private final byte[] pluginBytes;

        ByteLoader(String name, byte[] pluginBytes) {
            super(name, Main.class.getClassLoader());
            this.pluginBytes = pluginBytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (!name.equals("Plugin")) {
                    return super.loadClass(name, resolve);
                }
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = defineClass(name, pluginBytes, 0, pluginBytes.length);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }

    static byte[] classBytes(String name) throws IOException {
        try (InputStream in = Main.class.getResourceAsStream("/" + name + ".class")) {
            return in.readAllBytes();
        }
    }

    static Greeter newPlugin(ClassLoader loader) throws Exception {
        Class<?> c = Class.forName("Plugin", true, loader);
        return (Greeter) c.getDeclaredConstructor().newInstance();
    }

    public static void main(String[] args) throws Exception {
        byte[] bytes = classBytes("Plugin");
        ByteLoader a = new ByteLoader("loader-A", bytes);
        ByteLoader b = new ByteLoader("loader-B", bytes);
        Greeter fromA = newPlugin(a);
        Greeter fromB = newPlugin(b);
        System.out.println("same class: " + (fromA.getClass() == fromB.getClass())
                + ", same name: " + fromA.getClass().getName().equals(fromB.getClass().getName()));
        for (int i = 0; i < 2; i++) {
            System.out.println(fromA.greet("main"));
        }
        for (int i = 0; i < 3; i++) {
            System.out.println(fromB.greet("main"));
        }
        System.out.println("loader-A again gives the same class: " + (newPlugin(a).getClass() == fromA.getClass()));

        Class<?> hidden = MethodHandles.lookup().defineHiddenClass(classBytes("HiddenGreeter"), true).lookupClass();
        Greeter h = (Greeter) hidden.getDeclaredConstructor().newInstance();
        System.out.println(h.greet("main") + " (hidden: " + hidden.isHidden() + ")");
    }
}
