package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.tools.ToolProvider;

import org.dpdist.client.protocols.FrequencyProtocol;
import org.dpdist.client.protocols.Longitudinal;
import org.dpdist.client.protocols.NumericalProtocol;
import org.dpdist.client.protocols.ProtocolIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry is the protocol classes: ProtocolIndex.java is what scripts/ProtocolIndexWriter.java writes from them now
 * (so adding a protocol is its class and that command), each entry is its class's own entry point, and the attribute
 * protocols are the categorical ones without a device memo and the numerical ones.
 */
class RegistryTest {
    private static Path client() {
        return Fixtures.root().resolve(Paths.get("clients", "java"));
    }

    private static Path script() {
        return client().resolve(Paths.get("scripts", "ProtocolIndexWriter.java"));
    }

    /** The command as written, java clients/java/scripts/ProtocolIndexWriter.java ARGUMENTS, run in workingDirectory. */
    private static int writer(Path workingDirectory, String... arguments) throws IOException, InterruptedException {
        return run(workingDirectory, Arrays.asList(script().toString()), arguments);
    }

    /** The same script, compiled once into classes by this JVM's compiler, run as a class: each source-file launch
     *  compiles the script again (1.5 CPU-s a launch against 0.13). */
    private static int compiledWriter(Path classes, Path workingDirectory, String... arguments) throws IOException, InterruptedException {
        if (!Files.exists(classes.resolve("ProtocolIndexWriter.class"))) {
            assertEquals(0, ToolProvider.getSystemJavaCompiler().run(null, null, null, "-d", classes.toString(), script().toString()));
        }
        return run(workingDirectory, Arrays.asList("-cp", classes.toString(), "ProtocolIndexWriter"), arguments);
    }

    private static int run(Path workingDirectory, List<String> launch, String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(launch);
        for (String argument : arguments) command.add(argument);
        Process process = new ProcessBuilder(command).directory(workingDirectory.toFile()).redirectErrorStream(true).redirectOutput(new File("/dev/null")).start();
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("ProtocolIndexWriter took over 120 s");
        }
        return process.exitValue();
    }

    @Test
    void theCommittedIndexIsWhatTheScriptWritesFromTheProtocolClasses() throws Exception {
        assertEquals(0, writer(client(), "--check"), "stale: run `java clients/java/scripts/ProtocolIndexWriter.java`");
    }

    @Test
    void aProtocolClassAddedWithoutRunningTheScriptMakesTheIndexStale(@TempDir Path copy) throws Exception {
        Path folder = copy.resolve(Paths.get("src", "main", "java", "org", "dpdist", "client", "protocols"));
        Files.createDirectories(folder);
        Path source = client().resolve(Paths.get("src", "main", "java", "org", "dpdist", "client", "protocols"));
        try (java.util.stream.Stream<Path> files = Files.list(source)) {
            for (Path file : (Iterable<Path>) files::iterator) Files.copy(file, folder.resolve(file.getFileName()));
        }
        Path classes = Files.createDirectories(copy.resolve("writer-classes"));
        assertEquals(0, compiledWriter(classes, copy, "--check"));
        String krr = new String(Files.readAllBytes(folder.resolve("GRR.java")), StandardCharsets.UTF_8)
            .replace("class GRR", "class KRR").replace("\"grr\"", "\"krr\"").replace("public GRR(", "public KRR(");
        Files.write(folder.resolve("KRR.java"), krr.getBytes(StandardCharsets.UTF_8));
        assertNotEquals(0, compiledWriter(classes, copy, "--check"));
        assertEquals(0, compiledWriter(classes, copy));
        String index = new String(Files.readAllBytes(folder.resolve("ProtocolIndex.java")), StandardCharsets.UTF_8);
        assertEquals(2, index.split("new EntryPoint<>\\(KRR.PROTOCOL, KRR.class, KRR::new\\)", -1).length - 1, "krr is a protocol and an attribute protocol");
    }

    @Test
    void everyEntryIsItsClassesOwnEntryPointAndTheAttributeProtocolsAreThe1DOnesWithoutMemo() {
        Map<String, EntryPoint<?>> every = ProtocolIndex.protocols();
        for (Map.Entry<String, EntryPoint<?>> entry : every.entrySet()) {
            EntryPoint<?> own = EntryPoint.of(entry.getValue().type);
            assertEquals(entry.getKey(), own.protocol);
            assertEquals(entry.getValue().type, own.type);
            boolean oneDimensional = (FrequencyProtocol.class.isAssignableFrom(own.type) && !Longitudinal.class.isAssignableFrom(own.type))
                || NumericalProtocol.class.isAssignableFrom(own.type);
            assertEquals(oneDimensional, ProtocolIndex.attributeProtocols().containsKey(entry.getKey()), entry.getKey());
        }
        assertTrue(every.containsKey("grr") && every.containsKey("spl") && every.size() == DpDist.supportedProtocols().size());
    }
}
