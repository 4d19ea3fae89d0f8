package jbgui.output;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.zip.CRC32;
import java.util.zip.Deflater;

import jbgui.runtime.EventLayout;

/**
 * Turns a buffer of event words into one chunk (docs/trace-format.md): byte planes, then zlib
 * at its fastest level. Byte planes put the high bytes of all words (type and method id, which
 * change rarely) side by side, where zlib collapses them to almost nothing. Used by the writer
 * thread only.
 */
final class ChunkEncoder {
    private final Deflater deflater = new Deflater(1);
    private final CRC32 crc = new CRC32();
    private final byte[] header = new byte[EventLayout.CHUNK_HEADER_SIZE];
    private byte[] raw = new byte[4 * EventLayout.BUFFER_MAX_EVENTS];
    private byte[] out = new byte[4 * EventLayout.BUFFER_MAX_EVENTS + 4096];

    /** Writes the chunk and returns the number of bytes written. */
    int writeChunk(OutputStream o, int[] words, int n, long first, int flags) throws IOException {
        int size = 4 * n;
        if (raw.length < size) {
            raw = new byte[size];
            out = new byte[size + 4096];
        }
        byte[] r = raw;
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
        int len = 0;
        while (!deflater.finished() && len < out.length) {
            len += deflater.deflate(out, len, out.length - len);
        }
        byte[] payload = out;
        int codec = EventLayout.CODEC_ZLIB;
        if (!deflater.finished() || len >= size) {
            // Incompressible (never seen in practice): store the planes as they are.
            payload = r;
            len = size;
            codec = EventLayout.CODEC_NONE;
        }
        crc.reset();
        crc.update(payload, 0, len);
        byte[] h = header;
        Bytes.ascii(h, 0, "JBCK");
        h[4] = (byte) codec;
        h[5] = (byte) EventLayout.FILTER_BYTE_PLANES;
        Bytes.putShort(h, 6, flags);
        Bytes.putInt(h, 8, n);
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
        writeChunk(new ByteArrayOutputStream(), new int[] {1, 2, 3}, 3, 0, 0);
    }
}
