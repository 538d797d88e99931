"""Reader rules found by the pass over the w38 sem dev batch of the claim corpus: a pixel count "apart" with its length
in brackets, a lattice of the imaged features (not a crystal lattice), a next sentence that calls the value impossible,
YAML keys under another technique's block, a table row's first cell naming the method, a reference material's
certificate, lengths in metres after a negative power of ten, a frame's width with its dimension word, a feature
outside the frame (or off-frame), a specimen's gauge, a batch named by what sets it apart, the support under the
imaged object, the resolution named before a bracketed value, a population's min/max pair, a size limit named after
its number, a next question the model invents after answering, a LaTeX fraction read as a division, and a value the
image file stores. One test per rule, each with a case written fresh here (not copied from the corpus)."""

from __future__ import annotations

from claim_reading import values
from matpcr_plugins.sem.oracle import SEMOracle

SEM = SEMOracle()


def test_a_pixel_count_apart_with_its_length_in_brackets() -> None:
    chain = "The dimples are 22 px → 110 nm wide and sit about 18 px apart (≈ 90 nm).\nAnswer: 110 nm"
    assert values(SEM, chain) == [110.0, 90.0]


def test_a_lattice_of_the_imaged_features_is_not_a_crystal_lattice() -> None:
    chain = "Each pit is 12 px → 60 nm wide. The pits sit on a square lattice about 30 px apart (≈ 150 nm).\nAnswer: 60 nm"
    assert values(SEM, chain) == [60.0, 150.0]


def test_a_next_sentence_that_calls_the_value_impossible() -> None:
    chain = ("Bar 2 µm over 100 px, so 41 px × 0.2 = 8.2 µm? That can't be — the rod is thinner than the bar. "
             "2000 / 100 = 20 nm per px, so the rod is 820 nm.\nAnswer: 820 nm")
    assert values(SEM, chain) == [820.0]


def test_far_too_small_then_a_reread_retracts_the_value() -> None:
    question = ('An SEM image of a steel has a scale bar labelled "5 µm" spanning 100 px. A grain is 80 px across. '
                "What is the grain size?")
    chain = ("The grain comes out at 0.4 µm. That is far too small for a grain this coarse — re-reading the bar, it says "
             "5 µm, so the grain is 4 µm.\nAnswer: 4 µm")
    assert values(SEM, chain, question) == [4000.0]


def test_yaml_keys_under_another_techniques_block() -> None:
    chain = "sem:\n  rod_width_nm: 41\ntem:\n  rod_width_nm: 38\n\n  shell_nm: 3\nAnswer: 41 nm"
    assert values(SEM, chain) == [41.0]


def test_a_table_rows_first_cell_names_the_method() -> None:
    chain = "| Method | Size |\n|---|---|\n| this micrograph | 140 nm |\n| AFM, tapping mode | 14 nm |\nAnswer: 140 nm"
    assert values(SEM, chain) == [140.0]


def test_a_reference_materials_certificate() -> None:
    chain = "The certificate states 102 ± 3 nm for these beads. I get 21 px × 5 nm = 105 nm.\nAnswer: 105 nm"
    assert values(SEM, chain) == [105.0]


def test_lengths_in_metres_after_a_negative_power_of_ten() -> None:
    chain = "Pixel 2.5 × 10⁻⁹ m; the wire is 84 px → 2.1 × 10⁻⁷ m wide.\nAnswer: 2.1e-7 m"
    assert values(SEM, chain) == [210.0]


def test_a_frames_width_with_its_dimension_word() -> None:
    chain = "The cell is 12 µm long, about a fifth of this 60 µm wide frame.\nAnswer: 12 µm"
    assert values(SEM, chain) == [12000.0]


def test_a_feature_outside_the_frame_or_off_frame() -> None:
    chain = "The cell is 12 µm long. A void sits 0.2 mm deep, far outside the frame.\nAnswer: 12 µm"
    assert values(SEM, chain) == [12000.0]
    chain = "Layers: oxide 40 nm, metal 120 nm, substrate (1.1 mm, off-frame).\nAnswer: 120 nm"
    assert values(SEM, chain) == [40.0, 120.0]


def test_a_specimens_gauge_is_not_a_feature() -> None:
    chain = "The cell is 12 µm long. Specimen: 4 mm gauge length, 10 Hz.\nAnswer: 12 µm"
    assert values(SEM, chain) == [12000.0]


def test_a_batch_named_by_what_sets_it_apart() -> None:
    chain = "These cubes are 95 nm on an edge. The 80 °C batch gave ~60 nm cubes.\nAnswer: 95 nm"
    assert values(SEM, chain) == [95.0]


def test_the_support_under_the_imaged_object() -> None:
    chain = "The MoS2 sheet is 3.2 µm across; the tint comes from the 90 nm Si3N4 beneath the sheet.\nAnswer: 3.2 µm"
    assert values(SEM, chain) == [3200.0]


def test_the_resolution_named_before_a_bracketed_value() -> None:
    chain = "The gap between the dots is 7 nm, close to the resolution limit of this detector (~1.5 nm at 5 kV).\nAnswer: 7 nm"
    assert values(SEM, chain) == [7.0]


def test_a_populations_min_max_pair_is_a_range() -> None:
    chain = "Over 80 grains: mean 52 nm, min 31 nm, max 74 nm.\nAnswer: 52 nm"
    assert values(SEM, chain) == [52.0]


def test_a_size_limit_named_after_its_number() -> None:
    chain = "The grains are 52 nm, below cobalt's ~70 nm single-domain limit.\nAnswer: 52 nm"
    assert values(SEM, chain) == [52.0]


def test_a_next_question_the_model_invents_after_answering() -> None:
    chain = ("The rod is 32 px × 3 nm = 96 nm wide.\n\nAnswer: 96 nm\n\nQuestion: An SEM image of ZnO rods has a scale "
             'bar labelled "1 µm" spanning 200 px. A rod is 30 px wide. What is the rod width?\nAnswer: 150 nm')
    assert values(SEM, chain) == [96.0]


def test_a_latex_fraction_reads_as_a_division() -> None:
    question = 'An SEM image has a scale bar labelled "5 µm" spanning 125 px. A grain is 36 px wide. How wide is it?'
    chain = r"$w = 36 \times \frac{5\,\mu\mathrm{m}}{125} = 1.44\,\mu\mathrm{m}$" + "\nAnswer: 1.44 µm"
    assert values(SEM, chain, question) == [1440.0]


def test_a_value_the_image_file_stores_is_an_instrument_setting() -> None:
    chain = ("Pixel size in the TIFF: 4.96 nm. The bar gives 5.1 nm/px, a bit above the stored 4.96 nm. "
             "The flake is 60 px → 306 nm.\nAnswer: 306 nm")
    assert values(SEM, chain) == [306.0]
