// Print: the text form of KIR (inspect_kir, error messages, text-in/text-out
// tests). docs/kir.md describes the form; Parse (parser.h) reads it back, and
// Print(Parse(Print(m))) == Print(m) for every module the parser accepts.
//
// The printer never fails: a malformed module (a dangling value or block id,
// an unknown type) prints with `?` in the broken places, so the verifier can
// show it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kir/kir.h"

namespace nvk::kir {

std::string Print(const Module& module);
// "i32", "ptr<global, f32>", "void"; "<type N?>" for an id outside the table.
std::string TypeName(const Module& module, TypeId type);

// Print, plus where each part of the module landed in the text (0-based line
// numbers), so that diagnostics can point into it.
struct PrintedModule {
    std::string text;
    std::vector<uint32_t> param_lines;               // by param index
    std::vector<uint32_t> file_lines;                // by file index
    uint32_t func_line = 0;                          // the `func` line
    std::vector<uint32_t> block_lines;               // by position in function.blocks
    std::vector<std::vector<uint32_t>> inst_lines;   // [block position][inst index]
};
PrintedModule PrintWithLines(const Module& module);

// The text of one instruction as Print writes it (without indentation or loc).
std::string PrintInst(const Module& module, const Inst& inst);

// A diagnostic view of `text`: every line numbered, line `line` (0-based)
// marked with '>' and underlined from column `col` (0-based) for `len`
// characters (the rest of the line when len is 0), followed by `note`.
// Long texts are cut to a window around the marked line.
std::string MarkLine(std::string_view text, uint32_t line, uint32_t col, uint32_t len,
                     std::string_view note);

}  // namespace nvk::kir
