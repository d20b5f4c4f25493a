import ListJSON
import ListMerge
import ListDiffTestSupport
import Testing

/// The JSON of intents and conflicts (ListMerge's "Offline Writes and Conflicts"): exact output, round
/// trips, errors naming the place.
@Suite(.heavyWork) struct IntentJSONTests {
    @Test func aMoveIsWrittenAsTheDesignShowsIt() throws {
        let intent = Intent.moveElement("m3", section: "today", after: "m1", before: nil)
        #expect(intent.jsonValue == (try JSONValue(parsing: #"{"op":"moveElement","id":"m3","section":"today","after":"m1","before":null}"#)))
        #expect(intent.jsonValue.serialized() == #"{"after":"m1","before":null,"id":"m3","op":"moveElement","section":"today"}"#)
    }

    @Test func theDesignExampleDecodes() throws {
        let value = try JSONValue(parsing: #"{"op":"moveElement","id":"m3","section":"today","after":"m1","before":null}"#)
        #expect(try Intent(decoding: value) == .moveElement("m3", section: "today", after: "m1", before: nil))
    }

    static let everyKind: [Intent] = [
        .deleteSection("s", elements: ["a", ItemRef("a", ordinal: 1)]),
        .insertSection(
            ItemRef("n", ordinal: 2), content: ["title": "New"],
            elements: [Intent.Element("x", content: 1), Intent.Element(ItemRef("x", ordinal: 1))], after: nil, before: "s"),
        .moveSection("s", after: ItemRef("q", ordinal: 3), before: nil),
        .updateSection("s", base: ["title": "Old"], content: .null),
        .deleteElement(ItemRef("a", ordinal: 4)),
        .insertElement("é\u{0}", content: [1, "two"], section: ItemRef("s", ordinal: 1), after: "a", before: "b"),
        .moveElement("m", section: "s", after: nil, before: ItemRef("b", ordinal: 5)),
        .updateElement("m", section: "s", base: 1, content: 2),
    ]

    @Test func everyKindRoundTripsThroughJSONText() throws {
        let text = Intent.jsonValue(Self.everyKind).serialized()
        #expect(try Intent.intents(decoding: JSONValue(parsing: text)) == Self.everyKind)
    }

    @Test func keysAreNamedConsistently() {
        #expect(Self.everyKind.map(\.description) == [
            #"{"elements":[{"id":"a"},{"id":"a","ordinal":1}],"id":"s","op":"deleteSection"}"#,
            #"{"after":null,"before":"s","content":{"title":"New"},"elements":[{"content":1,"id":"x"},{"content":null,"id":"x","ordinal":1}],"id":"n","op":"insertSection","ordinal":2}"#,
            #"{"after":"q","afterOrdinal":3,"before":null,"id":"s","op":"moveSection"}"#,
            #"{"base":{"title":"Old"},"content":null,"id":"s","op":"updateSection"}"#,
            #"{"id":"a","op":"deleteElement","ordinal":4}"#,
            #"{"after":"a","before":"b","content":[1,"two"],"id":"é\u0000","op":"insertElement","section":"s","sectionOrdinal":1}"#,
            #"{"after":null,"before":"b","beforeOrdinal":5,"id":"m","op":"moveElement","section":"s"}"#,
            #"{"base":1,"content":2,"id":"m","op":"updateElement","section":"s"}"#,
        ])
    }

    @Test func absentOptionalKeysReadAsNullAndUnknownKeysAreIgnored() throws {
        let value = try JSONValue(parsing: #"{"op":"insertElement","id":"x","section":"s","extra":true}"#)
        #expect(try Intent(decoding: value) == .insertElement("x", content: .null, section: "s", after: nil, before: nil))
    }

    @Test func badIntentsAreRefusedWithThePlace() throws {
        func error(_ text: String) throws -> String {
            let value = try JSONValue(parsing: text)
            do {
                _ = try Intent.intents(decoding: value)
                return "accepted"
            } catch {
                return error.description
            }
        }
        #expect(try error(#"{}"#) == "top level: expected an array, found object")
        #expect(try error(#"[{"id":"a"}]"#) == "[0].op: required but missing")
        #expect(try error(#"[{"op":"explode","id":"a"}]"#) == #"[0].op: unknown intent operation "explode""#)
        #expect(try error(#"[{"op":"deleteElement"}]"#) == "[0].id: required but missing")
        #expect(try error(#"[{"op":"deleteElement","id":"a"},{"op":"moveElement","id":"a"}]"#) == "[1].section: required but missing")
        #expect(try error(#"[{"op":"deleteElement","id":"a","ordinal":-1}]"#) == "[0].ordinal: expected a non-negative integer, found -1")
        #expect(try error(#"[{"op":"deleteElement","id":"a","ordinal":1.5}]"#) == "[0].ordinal: expected a non-negative integer, found 1.5")
        #expect(try error(#"[{"op":"moveElement","id":"a","section":"s","after":3}]"#) == "[0].after: expected a string, found number")
        #expect(try error(#"[{"op":"insertSection","id":"a","elements":[{"content":1}]}]"#) == "[0].elements[0].id: required but missing")
        // An ordinal is checked whether or not its id is there (the OpenAPI schema's minimum 0).
        #expect(try error(#"[{"op":"moveElement","id":"a","section":"s","after":null,"afterOrdinal":-1}]"#) == "[0].afterOrdinal: expected a non-negative integer, found -1")
        #expect(try error(#"[{"op":"insertElement","id":"a","section":"s","beforeOrdinal":"x"}]"#) == "[0].beforeOrdinal: expected a non-negative integer, found string")
    }

    @Test func conflictsAreWrittenWithOnlyTheKeysThatSaySomething() throws {
        let report = [
            Conflict(.deleted, "m1", section: "today", mine: ["text": "hi"]),
            Conflict(.sectionDeleted, "m2", section: ItemRef("later", ordinal: 1)),
            Conflict(.removedWithSection, ItemRef("t", ordinal: 2), section: "later", theirs: .null),
            Conflict(.contentConflict, "m1", section: "today", key: "text", mine: "a", theirs: "b"),
            Conflict(.contentConflict, "today", mine: 1),
        ]
        #expect(report.map(\.description) == [
            #"{"id":"m1","kind":"deleted","mine":{"text":"hi"},"section":"today"}"#,
            #"{"id":"m2","kind":"sectionDeleted","section":"later","sectionOrdinal":1}"#,
            #"{"id":"t","kind":"removedWithSection","ordinal":2,"section":"later","theirs":null}"#,
            #"{"id":"m1","key":"text","kind":"contentConflict","mine":"a","section":"today","theirs":"b"}"#,
            #"{"id":"today","kind":"contentConflict","mine":1}"#,
        ])
        #expect(try Conflict.conflicts(decoding: JSONValue(parsing: Conflict.jsonValue(report).serialized())) == report)
    }

    @Test func badConflictsAreRefusedWithThePlace() throws {
        let value = try JSONValue(parsing: #"[{"kind":"deleted","id":"a"},{"kind":"oops","id":"b"}]"#)
        do {
            _ = try Conflict.conflicts(decoding: value)
            Issue.record("accepted an unknown kind")
        } catch {
            #expect(error.description == #"[1].kind: unknown conflict kind "oops""#)
        }
    }

    /// An `unknownSection` conflict is written as the kind a rebase reports for it, with a flag, so
    /// that readers that do not know the kind (earlier releases, which refuse unknown kinds) read
    /// what they read before; it reads back as `unknownSection`.
    @Test func anUnknownSectionIsWrittenAsTheRebasesKindWithAFlag() throws {
        let report = [
            Conflict(.unknownSection, "n", section: ItemRef("z", ordinal: 1), mine: 2),
            Conflict(.unknownSection, "q", mine: 1),
        ]
        #expect(report.map(\.description) == [
            #"{"id":"n","kind":"sectionDeleted","mine":2,"section":"z","sectionOrdinal":1,"unknownSection":true}"#,
            #"{"id":"q","kind":"deleted","mine":1,"unknownSection":true}"#,
        ])
        #expect(try Conflict.conflicts(decoding: JSONValue(parsing: Conflict.jsonValue(report).serialized())) == report)
        // A reader that ignores the flag (as earlier releases do) sees the rebase's kinds.
        let withoutFlag = report.map { conflict -> JSONValue in
            var object = conflict.jsonValue.objectValue!
            object["unknownSection"] = nil
            return .object(object)
        }
        #expect(try Conflict.conflicts(decoding: .array(withoutFlag)).map(\.kind) == [.sectionDeleted, .deleted])
        func error(_ text: String) throws -> String? {
            let value = try JSONValue(parsing: text)
            do {
                _ = try Conflict.conflicts(decoding: value)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(try error(#"[{"id":"q","kind":"unknownSection"}]"#) == #"[0].kind: unknown conflict kind "unknownSection""#)
        let misplaced = "[0].unknownSection: 'unknownSection' must be true, with kind sectionDeleted (an element's, with its section) or deleted (a section's)"
        #expect(try error(#"[{"id":"q","kind":"contentConflict","unknownSection":true}]"#) == misplaced)
        #expect(try error(#"[{"id":"q","kind":"deleted","section":"s","unknownSection":true}]"#) == misplaced)
        #expect(try error(#"[{"id":"q","kind":"deleted","unknownSection":false}]"#) == misplaced)
        #expect(try error(#"[{"id":"q","kind":"sectionDeleted","unknownSection":true}]"#) == misplaced)
    }
}
