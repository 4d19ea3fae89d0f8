import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Loads and links every class of the running JDK's runtime image (all modules), one shard of
 * them: java ImageCheck SHARD SHARDS. Linking verifies the class (with
 * -XX:+BytecodeVerificationLocal also for the bootstrap loader's classes), so under the jbgui
 * agent this checks that every instrumented class passes the JVM's own verifier.
 * Prints one line per failure ("VERIFY name: error" or "OTHER name: error") and a summary line.
 */
public class ImageCheck {
    public static void main(String[] args) throws Exception {
        int shard = Integer.parseInt(args[0]);
        int shards = Integer.parseInt(args[1]);
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        List<String[]> classes = new ArrayList<>();
        try (Stream<Path> modules = Files.list(jrt.getPath("/modules"))) {
            for (Path module : (Iterable<Path>) modules.sorted()::iterator) {
                try (Stream<Path> files = Files.walk(module)) {
                    for (Path f : (Iterable<Path>) files.sorted()::iterator) {
                        String name = module.relativize(f).toString();
                        if (name.endsWith(".class") && !name.endsWith("module-info.class")) {
                            classes.add(new String[] {module.getFileName().toString(),
                                    name.substring(0, name.length() - 6).replace('/', '.')});
                        }
                    }
                }
            }
        }
        int linked = 0;
        int verify = 0;
        int other = 0;
        int notInLayer = 0;
        for (int i = shard; i < classes.size(); i += shards) {
            String module = classes.get(i)[0];
            String name = classes.get(i)[1];
            if (ModuleLayer.boot().findModule(module).isEmpty()) {
                notInLayer++;
                continue;
            }
            ClassLoader loader = ModuleLayer.boot().findLoader(module);
            try {
                Class<?> c = Class.forName(name, false, loader);
                c.getDeclaredMethods(); // links the class, which verifies it
                linked++;
            } catch (VerifyError | ClassFormatError e) {
                verify++;
                System.out.println("VERIFY " + name + ": " + e);
            } catch (Throwable e) {
                other++;
                System.out.println("OTHER " + name + ": " + e.getClass().getName());
            }
        }
        System.out.println("SUMMARY linked=" + linked + " verify_failures=" + verify + " other_failures=" + other
                + " not_in_boot_layer=" + notInLayer + " total=" + classes.size());
    }
}
