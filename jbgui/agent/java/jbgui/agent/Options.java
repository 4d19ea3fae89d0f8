package jbgui.agent;

import java.io.File;
import java.io.IOException;
import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import jbgui.output.Utf8;

/**
 * The agent's options: {@code -javaagent:jbgui-agent.jar=key=value,key=value}. {@code config=FILE}
 * reads more from a file (lines {@code key=value} or {@code key value}), for values holding commas.
 * {@code events=FILE} is an event-selection file in the Tracing JVM's style
 * ({@code outputfile NAME}, {@code event NAME}). Filter files follow the IBM disclosure: one
 * class-name prefix per line ({@code java/lang}); {@code #} starts a comment.
 */
final class Options {
    static final List<String> EVENT_NAMES = Arrays.asList(
            "class_load", "method_start", "method_end", "basic_block", "receiver_type", "exception_exit");
    private static final List<String> KEYS = Arrays.asList(
            "out", "include", "exclude", "jdk", "level", "bba", "mode", "events", "instructions", "config", "clock", "record", "cache", "blocking", "elide", "loops", "virtual");

    File out;
    boolean outGiven;
    final List<String> include = new ArrayList<>();
    final List<String> exclude = new ArrayList<>();
    final List<String> includeFiles = new ArrayList<>();
    final List<String> excludeFiles = new ArrayList<>();
    boolean jdk = true;
    boolean blockLevel = true;
    boolean precise = false;
    int mode = 2;
    final Set<String> events = new LinkedHashSet<>(EVENT_NAMES);
    String eventsFile;
    boolean instructions = false;
    /** off: instrument exactly as configured but record no events (checking, measuring probe cost). */
    boolean record = true;
    /** Where instrumented JDK classes are kept between runs; null: not kept. */
    File cacheDir = defaultCacheDir();
    /**
     * Clock sampler period; 0 (the default) runs no sampler. Measured on javac: a sampler thread
     * that wakes up periodically, whatever the period (1 or 10 ms), doubled the recording
     * threads' cost, for reasons not yet understood; the exact samples every thread takes at its
     * start, at every buffer flush and at its end remain.
     */
    int clockMicros = 0;
    /** How many virtual threads are traced at most (jbgui.runtime.Config.virtualThreadsMax). */
    int virtualThreads = 1000;
    /**
     * Exact clock samples around calls that may block (sleep, wait, park, blocking I/O), so that
     * a blocked thread's time is measured instead of interpolated between buffer flushes
     * (docs/trace-format.md, "Stamps around blocking calls"; the reader: jbgui/model/blocking_times.py).
     * On by default; blocking=off records none.
     */
    boolean blocking = true;
    /**
     * Whether a method's first block may go without a probe when its event is implied by the
     * method's start (jbgui.instr.BlockElision; the trace writer writes it). On by default;
     * elide=off puts a probe in every block, which changes how fast, not what, is recorded.
     */
    boolean elide = true;
    /**
     * Whether a tight loop's blocks may be counted instead of recorded one event per step
     * (jbgui.instr.LoopCycles: the loop's record, which readers expand). On by default; loops=off
     * probes every block, which changes how fast, not what, is recorded.
     */
    boolean loops = true;

    /** Loop records need each thread's own stream (three words that stay together) and blocks in it. */
    boolean loopRecords() {
        return loops && mode == 2 && blockLevel && selected("basic_block");
    }

    /** Entry elision needs each thread's own stream with method starts and blocks in it. */
    boolean entryElision() {
        return elide && mode == 2 && blockLevel && selected("method_start") && selected("basic_block");
    }

    /** $JBGUI_CACHE/classes, else $XDG_CACHE_HOME/jbgui/classes, else ~/.cache/jbgui/classes. */
    private static File defaultCacheDir() {
        String env = System.getenv("JBGUI_CACHE");
        if (env != null && !env.isEmpty()) {
            return new File(env, "classes");
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        File base = xdg != null && !xdg.isEmpty() ? new File(xdg) : new File(System.getProperty("user.home"), ".cache");
        return new File(new File(base, "jbgui"), "classes");
    }

    static Options parse(String args) {
        Options o = new Options();
        if (args != null && !args.isBlank()) {
            for (String pair : args.split(",")) {
                if (pair.isBlank()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                if (eq < 0) {
                    throw new AgentError("option '" + pair + "' has no value; write key=value (keys: " + KEYS + ")");
                }
                o.set(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
            }
        }
        if (o.out == null) {
            String stamp = new SimpleDateFormat("yyyyMMdd-HHmmss").format(new Date());
            o.out = new File("jbgui-trace-" + stamp + "-" + jbgui.runtime.Config.pid()).getAbsoluteFile();
        }
        return o;
    }

    private void set(String key, String value) {
        switch (key) {
            case "out": out = new File(value).getAbsoluteFile(); outGiven = true; break;
            case "include": include.addAll(readPrefixes(value, "include")); includeFiles.add(value); break;
            case "exclude": exclude.addAll(readPrefixes(value, "exclude")); excludeFiles.add(value); break;
            case "jdk": jdk = onOff(key, value); break;
            case "instructions": instructions = onOff(key, value); break;
            case "record": record = onOff(key, value); break;
            case "blocking": blocking = onOff(key, value); break;
            case "elide": elide = onOff(key, value); break;
            case "loops": loops = onOff(key, value); break;
            case "cache": cacheDir = value.equals("off") ? null : new File(value).getAbsoluteFile(); break;
            case "level":
                if (!value.equals("block") && !value.equals("method")) {
                    throw new AgentError("level must be 'block' or 'method', not '" + value + "'");
                }
                blockLevel = value.equals("block");
                break;
            case "bba":
                if (!value.equals("default") && !value.equals("precise")) {
                    throw new AgentError("bba (basic-block analysis) must be 'default' or 'precise', not '" + value + "'");
                }
                precise = value.equals("precise");
                break;
            case "mode":
                if (!value.equals("1") && !value.equals("2")) {
                    throw new AgentError("mode must be 1 (one shared stream) or 2 (one stream per thread), not '" + value + "'");
                }
                mode = Integer.parseInt(value);
                break;
            case "clock":
                clockMicros = count(value, "clock must be the sampling period in microseconds (0 = off)");
                break;
            case "virtual":
                virtualThreads = count(value, "virtual must be how many virtual threads to trace at most (0 = none)");
                break;
            case "events": readEvents(value); break;
            case "config": readConfig(value); break;
            default:
                throw new AgentError("unknown option '" + key + "' (known: " + String.join(", ", KEYS) + ")");
        }
    }

    private static boolean onOff(String key, String value) {
        switch (value) {
            case "on": case "true": case "yes": return true;
            case "off": case "false": case "no": return false;
            default: throw new AgentError(key + " must be 'on' or 'off', not '" + value + "'");
        }
    }

    /** An include, exclude or events file is a list of names: anything larger is not one. */
    private static final int MAX_LIST_FILE_BYTES = 16 << 20;

    private static List<String> lines(String path, String what) {
        File f = new File(path);
        if (!f.isFile()) {
            throw new AgentError(what + " file not found: " + f.getAbsolutePath());
        }
        // java.io, not java.nio.file: NIO would leave a per-thread buffer cache on the main thread
        // that the program's thread exit then cleans up in the trace. Decoded whole rather than
        // through a Reader: a reader's classes, like every JDK class the agent loads before it
        // instruments the loaded ones, would be one more class to redefine (Utf8).
        try (java.io.FileInputStream in = new java.io.FileInputStream(f)) {
            // Read up to one byte over the bound, whatever length() says (a file still growing,
            // or one of /proc, whose length is 0).
            byte[] bytes = in.readNBytes(MAX_LIST_FILE_BYTES + 1);
            if (bytes.length > MAX_LIST_FILE_BYTES) {
                throw new AgentError(what + " file " + f.getAbsolutePath() + " is over " + MAX_LIST_FILE_BYTES + " bytes");
            }
            String text = Utf8.string(bytes, 0, bytes.length);
            List<String> lines = new ArrayList<>();
            int from = 0;
            while (from < text.length()) {
                int nl = text.indexOf('\n', from);
                int to = nl < 0 ? text.length() : nl;
                lines.add(to > from && text.charAt(to - 1) == '\r' ? text.substring(from, to - 1) : text.substring(from, to));
                from = to + 1;
            }
            return lines;
        } catch (IOException e) {
            throw new AgentError("cannot read " + what + " file " + f.getAbsolutePath() + ": " + e.getMessage());
        }
    }

    private static String strip(String line) {
        int hash = line.indexOf('#');
        return (hash >= 0 ? line.substring(0, hash) : line).trim();
    }

    static List<String> readPrefixes(String path, String what) {
        List<String> prefixes = new ArrayList<>();
        for (String line : lines(path, what + " filter")) {
            String p = strip(line);
            if (!p.isEmpty()) {
                prefixes.add(p.replace('.', '/'));
            }
        }
        return prefixes;
    }

    private void readEvents(String path) {
        eventsFile = path;
        Set<String> selected = new LinkedHashSet<>();
        int n = 0;
        for (String line : lines(path, "event-selection")) {
            n++;
            String l = strip(line);
            if (l.isEmpty()) {
                continue;
            }
            String[] words = splitWord(l);
            if (words[0].equals("event") && words.length == 2) {
                if (!EVENT_NAMES.contains(words[1])) {
                    throw new AgentError(path + ":" + n + ": unknown event '" + words[1] + "' (known: "
                            + String.join(", ", EVENT_NAMES) + ")");
                }
                selected.add(words[1]);
            } else if (words[0].equals("outputfile") && words.length == 2) {
                if (!outGiven) {
                    out = new File(words[1]).getAbsoluteFile();
                }
            } else {
                throw new AgentError(path + ":" + n + ": expected 'event NAME' or 'outputfile NAME', got '" + l + "'");
            }
        }
        if (!selected.isEmpty()) {
            events.clear();
            events.addAll(selected);
        }
    }

    private void readConfig(String path) {
        int n = 0;
        for (String line : lines(path, "config")) {
            n++;
            String l = strip(line);
            if (l.isEmpty()) {
                continue;
            }
            int eq = l.indexOf('=');
            String[] kv = eq >= 0 ? new String[] {l.substring(0, eq), l.substring(eq + 1)} : splitWord(l);
            if (kv.length != 2) {
                throw new AgentError(path + ":" + n + ": expected 'key=value', got '" + l + "'");
            }
            set(kv[0].trim(), kv[1].trim());
        }
    }

    /** "key rest of line" → {key, rest}; a regex would load java.util.regex before the program starts. */
    private static String[] splitWord(String line) {
        int i = 0;
        while (i < line.length() && !Character.isWhitespace(line.charAt(i))) {
            i++;
        }
        if (i == line.length()) {
            return new String[] {line};
        }
        return new String[] {line.substring(0, i), line.substring(i).trim()};
    }

    boolean selected(String event) {
        return events.contains(event);
    }

    /** {@code value} as a count from 0 to Integer.MAX_VALUE, or the agent's error: {@code what}, not VALUE. */
    private static int count(String value, String what) {
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 0) {
            throw new AgentError(what + ", not '" + value + "'");
        }
        return n;
    }

    String toJson() {
        StringBuilder s = new StringBuilder();
        s.append("{\"version\": \"").append(Engine.VERSION).append("\", \"options\": {");
        s.append("\"out\": ").append(jbgui.output.Json.quote(out.getPath()));
        s.append(", \"level\": \"").append(blockLevel ? "block" : "method").append('"');
        s.append(", \"bba\": \"").append(precise ? "precise" : "default").append('"');
        s.append(", \"mode\": ").append(mode);
        s.append(", \"jdk\": ").append(jdk);
        s.append(", \"instructions\": ").append(instructions);
        s.append(", \"record\": ").append(record);
        s.append(", \"cache\": ").append(cacheDir == null ? "null" : jbgui.output.Json.quote(cacheDir.getPath()));
        s.append(", \"clock_micros\": ").append(clockMicros);
        s.append(", \"blocking\": ").append(blocking);
        s.append(", \"elide\": ").append(entryElision());
        s.append(", \"loops\": ").append(loopRecords());
        s.append(", \"virtual\": ").append(virtualThreads);
        s.append(", \"include\": ").append(list(include));
        s.append(", \"exclude\": ").append(list(exclude));
        s.append(", \"events\": ").append(list(new ArrayList<>(events)));
        s.append("}}");
        return s.toString();
    }

    private static String list(List<String> items) {
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) {
            s.append(i == 0 ? "" : ", ").append(jbgui.output.Json.quote(items.get(i)));
        }
        return s.append(']').toString();
    }
}
