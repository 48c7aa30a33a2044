import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes src/main/java/org/dpdist/client/protocols/ProtocolIndex.java, the Java client's registry, from its protocol
 * classes (as clients/js/scripts/protocol-index.mjs writes the JavaScript client's): every class of that folder that
 * states {@code public static final String PROTOCOL = "<name>";} is the protocol {@code <name>} (shared code states
 * none).  The index offers {@code protocols()} (every protocol by name) and {@code attributeProtocols()} (the 1-D
 * protocols a record's attribute may use, Python's categorical_protocols and numerical_protocols: the categorical ones
 * without a device memo and the numerical ones), each entry a protocol's {@code EntryPoint}.  The classes are read as
 * text (their {@code extends} and {@code implements}), so no compiled class is needed.
 *
 * <pre>
 *   java clients/java/scripts/ProtocolIndexWriter.java           rewrite ProtocolIndex.java
 *   java clients/java/scripts/ProtocolIndexWriter.java --check   exit 1 if the committed one is stale
 * </pre>
 *
 * The client's tests run the check, so a protocol class added without running this fails them.
 */
public final class ProtocolIndexWriter {
    private static final Pattern NAME = Pattern.compile("public static final String PROTOCOL = \"([a-z0-9][a-z0-9-]*)\";");
    private static final Pattern DECLARATION = Pattern.compile(
        "(?:public )?(?:abstract |final )*class (\\w+)(?: extends (\\w+))?(?: implements ([\\w, ]+))?\\s*\\{");

    private ProtocolIndexWriter() {
    }

    /** The protocols folder, from the script's own place (clients/java/scripts) or the working directory. */
    static Path folder() {
        for (Path base : new Path[] {Paths.get("clients", "java"), Paths.get("."), Paths.get("..")}) {
            Path candidate = base.resolve(Paths.get("src", "main", "java", "org", "dpdist", "client", "protocols"));
            if (Files.isDirectory(candidate)) return candidate;
        }
        throw new IllegalStateException("run from the repository root or clients/java: no src/main/java/org/dpdist/client/protocols here");
    }

    /** name -&gt; class name of every protocol class; the superclass and interfaces of every class of the folder. */
    static Map<String, String> protocols(Path folder, Map<String, String[]> hierarchy) throws IOException {
        Map<String, String> out = new TreeMap<>();
        List<Path> files = new ArrayList<>();
        try (Stream<Path> listed = Files.list(folder)) {
            listed.filter(path -> path.toString().endsWith(".java")).sorted().forEach(files::add);
        }
        for (Path file : files) {
            String className = file.getFileName().toString().replace(".java", "");
            if (className.equals("ProtocolIndex")) continue;
            String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
            Matcher declared = DECLARATION.matcher(text);
            while (declared.find()) {
                if (!declared.group(1).equals(className)) continue;
                hierarchy.put(className, new String[] {declared.group(2), declared.group(3) == null ? "" : declared.group(3)});
                break;
            }
            Matcher name = NAME.matcher(text);
            if (!name.find()) continue;
            if (out.containsKey(name.group(1))) {
                throw new IllegalStateException("Two protocol classes state PROTOCOL = \"" + name.group(1) + "\": " + out.get(name.group(1)) + " and " + className);
            }
            if (!text.contains("public final class " + className + " extends ")) {
                throw new IllegalStateException(file + " states a PROTOCOL: it must be the protocol's public final class " + className
                    + " (shared code states none)");
            }
            out.put(name.group(1), className);
        }
        return out;
    }

    /** Whether {@code className} extends {@code base} (directly or not) within the folder. */
    static boolean extendsClass(String className, String base, Map<String, String[]> hierarchy) {
        for (String at = className; at != null; at = hierarchy.containsKey(at) ? hierarchy.get(at)[0] : null) {
            if (at.equals(base)) return true;
        }
        return false;
    }

    /** Whether {@code className} or a superclass implements {@code face}. */
    static boolean implementsInterface(String className, String face, Map<String, String[]> hierarchy) {
        for (String at = className; at != null && hierarchy.containsKey(at); at = hierarchy.get(at)[0]) {
            for (String named : hierarchy.get(at)[1].split(",")) if (named.trim().equals(face)) return true;
        }
        return false;
    }

    static String render(Path folder) throws IOException {
        Map<String, String[]> hierarchy = new HashMap<>();
        Map<String, String> protocols = protocols(folder, hierarchy);
        Map<String, String> attributes = new TreeMap<>();
        for (Map.Entry<String, String> entry : protocols.entrySet()) {
            String className = entry.getValue();
            boolean categorical = extendsClass(className, "FrequencyProtocol", hierarchy) && !implementsInterface(className, "Longitudinal", hierarchy);
            if (categorical || extendsClass(className, "NumericalProtocol", hierarchy)) attributes.put(entry.getKey(), className);
        }
        StringBuilder out = new StringBuilder();
        out.append("// The registry of the Java client, generated by clients/java/scripts/ProtocolIndexWriter.java from the protocol classes of\n")
            .append("// this folder (each stating `public static final String PROTOCOL`): do not edit; run the script after adding a protocol\n")
            .append("// class (the client's tests fail while this file is stale).  The tables are built on first use.\n")
            .append("package org.dpdist.client.protocols;\n\n")
            .append("import java.util.Collections;\nimport java.util.LinkedHashMap;\nimport java.util.Map;\n\n")
            .append("import org.dpdist.client.EntryPoint;\n\n")
            .append("/** Every protocol of the client, and those a record's attribute may use (generated). */\n")
            .append("public final class ProtocolIndex {\n")
            .append("    private static Map<String, EntryPoint<?>> every;\n    private static Map<String, EntryPoint<?>> attributes;\n\n")
            .append("    private ProtocolIndex() {\n    }\n\n");
        table(out, "Every protocol of the client, by registry name.", "protocols", "every", protocols);
        out.append('\n');
        table(out, "The 1-D protocols a record's attribute may use: the categorical ones without a device memo, and the numerical ones.",
            "attributeProtocols", "attributes", attributes);
        out.append("}\n");
        return out.toString();
    }

    private static void table(StringBuilder out, String doc, String method, String field, Map<String, String> entries) {
        out.append("    /** ").append(doc).append(" */\n")
            .append("    public static synchronized Map<String, EntryPoint<?>> ").append(method).append("() {\n")
            .append("        if (").append(field).append(" == null) {\n")
            .append("            Map<String, EntryPoint<?>> table = new LinkedHashMap<>();\n");
        for (String className : entries.values()) {
            out.append("            table.put(").append(className).append(".PROTOCOL, new EntryPoint<>(").append(className).append(".PROTOCOL, ")
                .append(className).append(".class, ").append(className).append("::new));\n");
        }
        out.append("            ").append(field).append(" = Collections.unmodifiableMap(table);\n")
            .append("        }\n        return ").append(field).append(";\n    }\n");
    }

    public static void main(String[] arguments) throws IOException {
        Path folder = folder();
        Path index = folder.resolve("ProtocolIndex.java");
        String text = render(folder);
        if (arguments.length > 0 && arguments[0].equals("--check")) {
            String committed = Files.exists(index) ? new String(Files.readAllBytes(index), StandardCharsets.UTF_8) : "";
            if (!committed.equals(text)) {
                System.err.println(index + " is stale: run `java clients/java/scripts/ProtocolIndexWriter.java`");
                System.exit(1);
            }
            return;
        }
        Files.write(index, text.getBytes(StandardCharsets.UTF_8));
        System.err.println("wrote " + index);
    }
}
