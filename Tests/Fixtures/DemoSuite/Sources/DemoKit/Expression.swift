/// A tiny integer expression language: + - * / and parentheses.
public enum Token: Equatable, Sendable {
    case number(Int)
    case op(Character)
    case lparen
    case rparen
}

public enum ExpressionError: Error, Equatable {
    case unexpectedCharacter(Character)
    case unexpectedEnd
    case unbalancedParentheses
    case divisionByZero
}

public enum Tokenizer {
    public static func tokenize(_ s: String) throws -> [Token] {
        var tokens: [Token] = []
        var number: Int?
        func flush() {
            if let n = number { tokens.append(.number(n)); number = nil }
        }
        for ch in s {
            if let d = ch.wholeNumberValue, ch.isASCII {
                number = (number ?? 0) * 10 + d
                continue
            }
            flush()
            switch ch {
            case " ", "\t": continue
            case "+", "-", "*", "/": tokens.append(.op(ch))
            case "(": tokens.append(.lparen)
            case ")": tokens.append(.rparen)
            default: throw ExpressionError.unexpectedCharacter(ch)
            }
        }
        flush()
        return tokens
    }
}

/// Recursive-descent evaluator.
public struct ExpressionParser {
    private var tokens: [Token]
    private var index = 0

    public static func evaluate(_ source: String) throws -> Int {
        var p = ExpressionParser(tokens: try Tokenizer.tokenize(source))
        let v = try p.parseSum()
        guard p.index == p.tokens.count else {
            throw p.tokens[p.index] == .rparen ? ExpressionError.unbalancedParentheses
                                                : ExpressionError.unexpectedEnd
        }
        return v
    }

    private init(tokens: [Token]) { self.tokens = tokens }

    private mutating func parseSum() throws -> Int {
        var v = try parseProduct()
        while index < tokens.count, case .op(let o) = tokens[index], o == "+" || o == "-" {
            index += 1
            let rhs = try parseProduct()
            v = o == "+" ? v + rhs : v - rhs
        }
        return v
    }

    private mutating func parseProduct() throws -> Int {
        var v = try parseAtom()
        while index < tokens.count, case .op(let o) = tokens[index], o == "*" || o == "/" {
            index += 1
            let rhs = try parseAtom()
            if o == "*" { v *= rhs } else {
                guard rhs != 0 else { throw ExpressionError.divisionByZero }
                v /= rhs
            }
        }
        return v
    }

    private mutating func parseAtom() throws -> Int {
        guard index < tokens.count else { throw ExpressionError.unexpectedEnd }
        let t = tokens[index]
        index += 1
        switch t {
        case .number(let n): return n
        case .op("-"): return -(try parseAtom())
        case .lparen:
            let v = try parseSum()
            guard index < tokens.count, tokens[index] == .rparen else {
                throw ExpressionError.unbalancedParentheses
            }
            index += 1
            return v
        default: throw ExpressionError.unexpectedEnd
        }
    }
}
