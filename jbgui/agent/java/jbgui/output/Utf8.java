package jbgui.output;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.Charset;

/**
 * UTF-8, the encoding of every text file the agent writes and of the names in its class cache.
 *
 * <p>Why not {@code java.nio.charset.StandardCharsets.UTF_8}: that class's initializer creates all
 * eight of its charsets, and with their classes nine JDK classes that a program which never asks
 * for them does not load. The agent loads them before it instruments the classes already loaded,
 * so each would be one more class to redefine, and on JDK 25 one more to verify
 * (docs/recorder-cost.md). The JVM has the UTF-8 charset itself loaded from its first steps. For the
 * same reason {@link TextFile} encodes with {@code String.getBytes} rather than through an
 * {@code OutputStreamWriter}, whose encoder loads three more.
 */
public final class Utf8 {
    private Utf8() {}

    public static final Charset CHARSET = Charset.forName("UTF-8");

    public static String string(byte[] b, int off, int len) {
        return new String(b, off, len, CHARSET);
    }

    /** A text file written in UTF-8 through a buffer: what the writer needs of a Writer. */
    static final class TextFile implements AutoCloseable {
        private final OutputStream out;

        TextFile(File file, int buffer) throws IOException {
            out = new BufferedOutputStream(new FileOutputStream(file), buffer);
        }

        void write(String s) throws IOException {
            out.write(s.getBytes(CHARSET));
        }

        void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }
}
