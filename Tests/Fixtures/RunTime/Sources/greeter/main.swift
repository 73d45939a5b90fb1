// Greets its first argument: the executable CLITests runs from the products folder.
let name = CommandLine.arguments.dropFirst().first ?? "world"
print("Hello, \(name)!")
