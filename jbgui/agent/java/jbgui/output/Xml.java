package jbgui.output;

/** Escaping for static.xml attribute values and text. */
public final class Xml {
    private Xml() {}

    /**
     * The value escaped. The characters are read from one copy of the string, not one charAt
     * each: the JDK's String methods are instrumented, and on the tracer's own threads each call
     * still passes its probes (the writer escapes most of a cold run's static.xml here).
     */
    public static String attr(String s) {
        char[] cs = s.toCharArray();
        StringBuilder b = null;
        for (int i = 0; i < cs.length; i++) {
            char c = cs[i];
            String rep;
            switch (c) {
                case '<': rep = "&lt;"; break;
                case '>': rep = "&gt;"; break;
                case '&': rep = "&amp;"; break;
                case '"': rep = "&quot;"; break;
                case '\n': rep = "&#10;"; break;
                default:
                    // XML 1.0 cannot carry most control characters or lone surrogates: replace them.
                    rep = (c < 0x20 && c != '\t') || (c >= '\uD800' && c <= '\uDFFF') ? "?" : null;
            }
            if (rep != null) {
                if (b == null) {
                    b = new StringBuilder(cs.length + 16).append(cs, 0, i);
                }
                b.append(rep);
            } else if (b != null) {
                b.append(c);
            }
        }
        return b == null ? s : b.toString();
    }

    /** Text content: same escaping, but newlines stay newlines. */
    public static String text(String s) {
        return attr(s).replace("&#10;", "\n");
    }
}
