package jbgui.output;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.zip.CRC32;
import java.util.zip.Deflater;

import jbgui.runtime.EventLayout;

/**
 * Turns a buffer of event words into one chunk (docs/trace-format.md). With the engine's codec
 * (zstd at a fast level, jbgui.zstd.ZstdCodec.LEVEL) the words go in as they are: measured on
 * javac's chunks (level 1, before the events' compaction of 2026-11) it wrote 0.27 bytes per event
 * at about 270 M events/s on one core, where byte planes + zlib wrote 0.39 at 55 M/s and byte
 * planes made zstd both slower and bigger. Without it (no native zstd on the machine): byte
 * planes, then zlib at its fastest level, which collapses the planes of the high bytes (type and
 * method id, which change rarely). Used by the writer thread only.
 */
final class ChunkEncoder {
    // Made by use(null) only, when zlib is the codec (the writer calls use before its first
    // chunk): otherwise its two classes would be JDK classes more that the agent loads before it
    // instruments the loaded ones, each one more to redefine (Utf8).
    private Deflater deflater;
    private final CRC32 crc = new CRC32();
    private final byte[] header = new byte[EventLayout.CHUNK_HEADER_SIZE];
    private byte[] raw = new byte[4 * EventLayout.BUFFER_MAX_EVENTS];
    private byte[] out = new byte[4 * EventLayout.BUFFER_MAX_EVENTS + 4096];
    private IntBuffer rawInts = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer();
    private ChunkCodec codec;

    /** Compresses with {@code c} from now on (null: byte planes and zlib). */
    void use(ChunkCodec c) {
        codec = c;
        if (c == null && deflater == null) {
            deflater = new Deflater(1);
        }
    }

    /**
     * Writes the chunk and returns the number of bytes written: {@code n} words of payload that
     * stand for {@code events} events ({@code events > n} with EventLayout.FILTER_ENTRY_BLOCKS in
     * {@code filterBits}: see EntryBlocks).
     */
    int writeChunk(OutputStream o, int[] words, int n, int events, long first, int flags, int filterBits) throws IOException {
        int size = 4 * n;
        ChunkCodec c = codec;
        int need = c == null ? size + 4096 : Math.max(size, c.bound(size));
        if (raw.length < size || out.length < need) {
            raw = new byte[Math.max(raw.length, size)];
            out = new byte[Math.max(out.length, need)];
            rawInts = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer();
        }
        byte[] r = raw;
        byte[] payload = out;
        int len;
        int codecId;
        int filter;
        if (c != null) {
            rawInts.clear();
            rawInts.put(words, 0, n);
            len = c.compress(r, size, out);
            codecId = c.id();
            filter = EventLayout.FILTER_NONE;
        } else {
            for (int i = 0; i < n; i++) {
                int w = words[i];
                r[i] = (byte) w;
                r[n + i] = (byte) (w >>> 8);
                r[2 * n + i] = (byte) (w >>> 16);
                r[3 * n + i] = (byte) (w >>> 24);
            }
            deflater.reset();
            deflater.setInput(r, 0, size);
            deflater.finish();
            len = 0;
            while (!deflater.finished() && len < out.length) {
                len += deflater.deflate(out, len, out.length - len);
            }
            codecId = deflater.finished() ? EventLayout.CODEC_ZLIB : EventLayout.CODEC_NONE;
            filter = EventLayout.FILTER_BYTE_PLANES;
        }
        if (codecId == EventLayout.CODEC_NONE || len >= size) {
            // Incompressible (never seen in practice): store the words as they are.
            payload = r;
            len = size;
            codecId = EventLayout.CODEC_NONE;
        }
        crc.reset();
        crc.update(payload, 0, len);
        byte[] h = header;
        Bytes.ascii(h, 0, "JBCK");
        h[4] = (byte) codecId;
        h[5] = (byte) (filter | filterBits);
        Bytes.putShort(h, 6, flags);
        Bytes.putInt(h, 8, events);
        Bytes.putInt(h, 12, len);
        Bytes.putLong(h, 16, first);
        Bytes.putInt(h, 24, (int) crc.getValue());
        Bytes.putInt(h, 28, 0);
        o.write(h);
        o.write(payload, 0, len);
        return h.length + len;
    }

    /** Runs the encoder once so its classes are loaded before the program starts. */
    void warmUp() throws IOException {
        int[] words = new int[4096];
        for (int i = 0; i < words.length; i++) {
            words[i] = i * 31;
        }
        writeChunk(new ByteArrayOutputStream(), words, words.length, words.length, 0, 0, 0);
    }
}
