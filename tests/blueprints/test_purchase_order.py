"""Purchase order: the total is computed from the quantity, so a withheld quantity still prices right."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build

from coworkenv.synth.composer import Recipe, compose


class TestPurchaseOrder(BlueprintCases):
    name = "purchase_order"

    def test_the_total_is_a_template_over_the_quantity(self) -> None:
        draft = build(self.name)
        description = draft.reference.main()["args"]["description"]
        assert "${round(facts.qty * " in description

    def test_a_withheld_quantity_is_asked_before_the_ticket(self) -> None:
        spec = compose(Recipe(self.name, 3, ("withhold",)))
        kinds = [type(s).__name__ for s in spec.reference]
        assert "AskStep" in kinds and kinds.index("AskStep") < len(kinds) - 2
