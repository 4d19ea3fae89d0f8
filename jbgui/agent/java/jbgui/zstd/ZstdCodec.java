package jbgui.zstd;

import java.io.File;

import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.util.Native;

import jbgui.output.ChunkCodec;
import jbgui.runtime.EventLayout;

/**
 * zstd (level {@value #LEVEL}, and {@value #SMALL_LEVEL} for small chunks) for chunk payloads, from Debian's zstd-jni (libzstd-jni-java, libzstd-jni1).
 * It and zstd-jni live in a module of their own, loaded by jbgui.agent.CodecModule, not on the
 * boot class path: zstd-jni's classes there would be the ones a program that bundles its own
 * zstd-jni gets, and a native library belongs to one class loader. The writer reaches it through
 * {@link ChunkCodec}.
 */
public final class ZstdCodec implements ChunkCodec {
    /** Where Debian's libzstd-jni1 installs the JNI library, per architecture. */
    private static final String[] LIBRARY_DIRS = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
            "/usr/lib/jni", "/usr/lib64", "/usr/lib"};

    /**
     * zstd's first fast level below 1. Measured with benchmarks/codec_share.py on javac's chunks
     * (Python's libzstd, one core, 2026-12-02): at the default level 1.34x level 1's speed for
     * 1.14x its bytes (0.104 bytes a stored word against 0.091), at level=method 1.24x for 1.11x
     * (0.090 against 0.081); level -3 was little faster for 1.2x the bytes. The writer shares the
     * program's two cores with the JIT, so its CPU is the program's.
     */
    static final int LEVEL = -1;

    /**
     * The level for a payload of at most {@link #SMALL_BYTES}: a chunk that short is a thread's
     * last or a flush, never a full buffer (1 MiB), so a short run's trace is mostly such chunks
     * and a long run's hardly any. On a traced hello world's five chunks (6,287 stored words,
     * Python's libzstd): level -1 10,964 bytes at 493 MB/s, level 3 8,383 bytes (0.76 of it) at
     * 245 MB/s, level 9 8,280 at 58 MB/s; so at most ~0.15 ms more per such chunk.
     */
    static final int SMALL_LEVEL = 3;
    static final int SMALL_BYTES = 64 << 10;

    private final ZstdCompressCtx ctx = context(LEVEL);
    private final ZstdCompressCtx small = context(SMALL_LEVEL);

    private ZstdCodec() {
    }

    private static ZstdCompressCtx context(int level) {
        ZstdCompressCtx c = new ZstdCompressCtx();
        c.setLevel(level);
        c.setChecksum(false);
        c.setContentSize(true);
        return c;
    }

    /**
     * The codec, or null when zstd-jni or its native library is missing or fails (the trace is
     * then written with zlib). Called by jbgui.agent.CodecModule, reflectively: the engine's own
     * loader must never load this class, or zstd-jni's, itself.
     */
    public static ChunkCodec load() {
        if (nativeAccessWarns()) {
            jbgui.output.TraceWriter.log("info: chunks are written with zlib: on JDK 24+ zstd's JNI library needs "
                    + "native access for its module (jbgui.agent.CodecModule could not grant it), else the JVM "
                    + "warns on the program's stderr");
            return null;
        }
        try {
            if (!Native.isLoaded()) {
                File lib = find();
                if (lib == null) {
                    return null;
                }
                System.load(lib.getAbsolutePath());
                Native.assumeLoaded();
            }
            ZstdCodec codec = new ZstdCodec();
            byte[] probe = new byte[256];
            codec.compress(probe, probe.length, new byte[codec.bound(probe.length)]);
            return codec;
        } catch (Throwable e) {
            jbgui.output.TraceWriter.log("warning: zstd unavailable, chunks are written with zlib: " + e);
            return null;
        }
    }

    /**
     * Since JDK 24 a JNI library loaded, or a native method bound, from a module without native
     * access prints a warning on the program's stderr (JEP 472). CodecModule grants it to this
     * class's module; should that have failed, zstd is not used.
     */
    private static boolean nativeAccessWarns() {
        if (Runtime.version().feature() < 24) {
            return false;
        }
        try {
            return !(Boolean) Module.class.getMethod("isNativeAccessEnabled").invoke(ZstdCodec.class.getModule());
        } catch (ReflectiveOperationException | RuntimeException e) {
            return true;
        }
    }

    private static File find() {
        String override = System.getProperty("jbgui.zstd.library");
        if (override != null) {
            return new File(override);
        }
        for (String dir : LIBRARY_DIRS) {
            File f = new File(dir, "libzstd-jni.so.1");
            if (f.isFile()) {
                return f;
            }
            f = new File(dir, "libzstd-jni.so");
            if (f.isFile()) {
                return f;
            }
        }
        return null;
    }

    @Override
    public int id() {
        return EventLayout.CODEC_ZSTD;
    }

    @Override
    public int bound(int size) {
        // ZSTD_COMPRESSBOUND: size + size/256 + a little for small inputs.
        return size + (size >>> 8) + 64 + (size < (128 << 10) ? ((128 << 10) - size) >>> 11 : 0);
    }

    @Override
    public int compress(byte[] src, int len, byte[] dst) {
        return (len <= SMALL_BYTES ? small : ctx).compressByteArray(dst, 0, dst.length, src, 0, len);
    }
}
