package jbgui.output;

/** The little JSON the agent writes (trace.json, threads.jsonl) needs only string quoting. */
public final class Json {
    private Json() {}

    public static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        String hex = Integer.toHexString(c);
                        b.append("\\u").append("0000", hex.length(), 4).append(hex);
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }
}
