package jbgui.output;

/**
 * A block compressor for chunk payloads, supplied by the engine (which may hold a native
 * library the boot class path cannot: see jbgui.zstd.ZstdCodec). Used by the writer thread only.
 */
public interface ChunkCodec {
    /** The chunk header's codec byte (EventLayout.CODEC_*). */
    int id();

    /** The largest payload {@link #compress} may write for {@code size} input bytes. */
    int bound(int size);

    /** Compresses {@code src[0, len)} into {@code dst} and returns the payload length. */
    int compress(byte[] src, int len, byte[] dst);
}
