package jbgui.agent;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReader;
import java.lang.module.ModuleReference;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import jbgui.output.ChunkCodec;
import jbgui.output.TraceWriter;

/**
 * Loads the chunk codec (jbgui.zstd.ZstdCodec and zstd-jni, both in the engine's jar) as a named
 * module of its own, {@value #MODULE}, in a module layer of its own with its own class loader.
 *
 * <p>Why: since JDK 24 loading a JNI library, or binding a native method, from a module without
 * native access prints a warning on the program's stderr (JEP 472), and the JVM keeps that access
 * for all unnamed modules in one switch (--enable-native-access=ALL-UNNAMED), which would also
 * silence the warnings of the program's own code. A named module gets it alone, here through the
 * JDK's internal entry point that --enable-native-access=M uses (JdkAccess.grantNativeAccess).
 * Without this the codec fell back to zlib on JDK 25: level=method javac took 4.94x its untraced
 * time, its writer 17.8 s of encoding, and the program's threads waited 8.4 s for it.
 *
 * <p>The layer is not reachable from the boot layer, so the program never sees the module. Before
 * JDK 24 there is no warning to avoid, and the engine's own loader loads the codec as it always
 * did; the tests run on JDK 17 and 25 (tests/conftest.py, every JDK of the machine) and so cover
 * both paths.
 */
final class CodecModule {
    private CodecModule() {}

    static final String MODULE = "jbgui.zstd";
    private static final String CODEC = "jbgui.zstd.ZstdCodec";
    private static final Set<String> PACKAGES = Set.of("jbgui.zstd", "com.github.luben.zstd", "com.github.luben.zstd.util");

    /** The module's class loader once made: the transformer leaves its classes alone, as the engine's. */
    private static volatile ClassLoader loader;

    static ClassLoader loader() {
        return loader;
    }

    /**
     * The zstd codec, or null (the trace is then written with zlib) when {@code -Djbgui.codec=zlib}
     * asks for zlib, or when zstd-jni, its native library or the module cannot be had.
     */
    static ChunkCodec load(Instrumentation inst) {
        if ("zlib".equals(System.getProperty("jbgui.codec"))) {
            return null;
        }
        try {
            if (Runtime.version().feature() < 24) {
                // No warning to avoid before JEP 472: the engine's own loader serves. The module
                // would cost some 24 more JDK classes at start-up (the resolver's), each one more
                // to retransform: a traced hello world on JDK 17 took 1.079 of the time with it
                // (0.390 s against 0.369 s, medians of 5 alternating runs).
                return load(CodecModule.class.getClassLoader());
            }
            File jar = new File(CodecModule.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            ModuleDescriptor descriptor = ModuleDescriptor.newModule(MODULE).packages(PACKAGES).exports("jbgui.zstd").build();
            final ModuleReference reference = new ModuleReference(descriptor, null) {
                @Override
                public ModuleReader open() throws IOException {
                    // The loader below reads the classes itself; nothing asks the layer for a reader.
                    throw new IOException("not readable: " + MODULE);
                }
            };
            ModuleFinder finder = new ModuleFinder() {
                @Override
                public Optional<ModuleReference> find(String name) {
                    return MODULE.equals(name) ? Optional.of(reference) : Optional.empty();
                }

                @Override
                public Set<ModuleReference> findAll() {
                    return Set.of(reference);
                }
            };
            ModuleLayer boot = ModuleLayer.boot();
            Configuration cf = boot.configuration().resolve(finder, ModuleFinder.of(), Set.of(MODULE));
            final ClassLoader own = new Loader(jar, CodecModule.class.getClassLoader());
            loader = own;
            ModuleLayer layer = boot.defineModules(cf, new java.util.function.Function<String, ClassLoader>() {
                @Override
                public ClassLoader apply(String name) {
                    return own;
                }
            });
            Module module = layer.findModule(MODULE).get();
            // The codec implements the writer's ChunkCodec and logs through TraceWriter, both in
            // the boot loader's unnamed module, which a named module reads only when told to.
            inst.redefineModule(module, Set.of(ChunkCodec.class.getModule()), Map.of(), Map.of(), Set.of(), Map.of());
            JdkAccess.grantNativeAccess(module);
            return load(own);
        } catch (Throwable e) {
            TraceWriter.log("warning: zstd unavailable, chunks are written with zlib: " + e);
            return null;
        }
    }

    private static ChunkCodec load(ClassLoader from) throws ReflectiveOperationException {
        return (ChunkCodec) Class.forName(CODEC, true, from).getMethod("load").invoke(null);
    }

    /**
     * The module's class loader: the module's packages from the engine's jar, read here first
     * (the engine's loader, its parent, would otherwise define them in its unnamed module);
     * everything else from the parent.
     */
    private static final class Loader extends ClassLoader {
        private final JarFile jar;
        private final java.security.ProtectionDomain domain;

        Loader(File engine, ClassLoader parent) throws IOException {
            super("jbgui-codec", parent);
            jar = new JarFile(engine, false);
            domain = new java.security.ProtectionDomain(new java.security.CodeSource(engine.toURI().toURL(),
                    (java.security.CodeSigner[]) null), null);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            int dot = name.lastIndexOf('.');
            if (dot < 0 || !PACKAGES.contains(name.substring(0, dot))) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                return c != null ? c : findClass(name);
            }
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            JarEntry entry = jar.getJarEntry(name.replace('.', '/') + ".class");
            if (entry == null) {
                throw new ClassNotFoundException(name);
            }
            byte[] bytes;
            try (InputStream in = jar.getInputStream(entry)) {
                bytes = in.readAllBytes();
            } catch (IOException e) {
                throw new ClassNotFoundException(name, e);
            }
            return defineClass(name, bytes, 0, bytes.length, domain);
        }
    }
}
