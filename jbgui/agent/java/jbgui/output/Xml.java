package jbgui.output;

/** Escaping for static.xml attribute values and text. */
public final class Xml {
    private Xml() {}

    public static String attr(String s) {
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            String rep;
            switch (c) {
                case '<': rep = "&lt;"; break;
                case '>': rep = "&gt;"; break;
                case '&': rep = "&amp;"; break;
                case '"': rep = "&quot;"; break;
                case '\n': rep = "&#10;"; break;
                default:
                    // XML 1.0 cannot carry most control characters or lone surrogates: replace them.
                    rep = (c < 0x20 && c != '\t') || Character.isSurrogate(c) ? "?" : null;
            }
            if (rep != null) {
                if (b == null) {
                    b = new StringBuilder(s.length() + 16).append(s, 0, i);
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
