package jbgui.output;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Static information that writes itself as UTF-8 bytes. The writer thread calls it; it spares
 * building (and encoding) a String for each class, which matters at exit, when the static
 * information of a thousand classes may still be waiting.
 */
public interface XmlFragment {
    void writeTo(OutputStream out) throws IOException;
}
