import ArgumentParser

// Parsed by hand so that the async subcommands run on the async path (see `AsyncRunnable`).
do {
    var command = try BenchCommand.parseAsRoot()
    if var asyncCommand = command as? any AsyncRunnable {
        try await asyncCommand.runAsync()
    } else {
        try command.run()
    }
} catch {
    BenchCommand.exit(withError: error)
}
