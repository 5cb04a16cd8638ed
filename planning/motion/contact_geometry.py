"""Where the tool meets the tower: the distances of each contact (how far a block is pushed out,
where the pads hold it, how far it is set down out of its slot), the keep-out margins the motion
planner keeps from the tower, and the place's default press guard. Lengths in m.
"""

# Geometry of contacts (m).
STANDOFF = 0.03          # tool clearance from the tower before and after contact
CONTACT_LEAD = 0.002     # where the guarded push starts, before the nominal face
# The pads' centre inside the block's end face. The 20 mm pads then reach 4 mm past the end and the
# fingers' ends 16 mm into the block: the less they reach in, the shorter the push-through before
# the grasp and the overhang before the push home can be.
GRIP_DEPTH = 0.006
# How far a chosen block is pushed out of the front face before it is grasped: the least that lets
# the fingers' ends close clear of the tower (by 5 mm). A block pushed by one point turns as it
# slides out, the more the further: loose side blocks of the simulated cell turned 1-3 degrees by
# 20 mm, 5-6 by 27 mm and up to 19 by 33 mm, where the fingers missed them; in a seed-2 game block
# 7.2 had turned 3.6 degrees by 16 mm, 6.5 by 21 mm and 13 by 26 mm (its front end 14 mm across at
# the grasp, where three tries met it). 27 mm with the pads 12 mm in; every slot of layers 2-18
# can still be pulled, and layers 19-25 placed, with these.
PUSH_THROUGH = 0.021
GRASP_RAISES = (0.0, 0.003, 0.005)  # grasp centre above the block's centre line, tried in order
PULL_CLEARANCE = 0.02    # how far past the tower face a pulled block ends up
# The pull holds the block lightly (N of squeeze). A firm grip fixes the block to the arm's path,
# and the fraction of a millimetre by which the path strays from the slot presses the block into
# the blocks around it: in the simulated cell a loose block held at 15 N dragged the tower above
# it 30 mm, held at 1.5-3 N it came out alone. 2 N holds 4 N along the pull on the rubber pads,
# above the pull's guard. The block is squeezed at the full grip force before it leaves the tower:
# held at 2 N, a block whose inner end slid off the layer below swung 17-28 mm down in the pads.
PULL_GRIP_N = 2.0
SQUEEZE_INSIDE = 0.01    # how far the pulled block still rests inside the tower when it is squeezed
PLACE_HOVER = 0.04       # held block's bottom above its resting height before the descent
PLACE_SLOW = 0.005       # last part of the descent, done slowly under a guard
# With blocks already in the layer the guarded descent starts this far above their tops: a block
# laid a millimetre or two onto its neighbour's edge (a seed-2 match: the neighbour lay 1.4 mm off
# its slot) met it 15 mm above its rest, while the descent ran unguarded to 5 mm above the rest.
# Pressed 10 mm into the neighbour's edge it rocked the top of the tower, slid off outward and was
# pushed off the tower by the push home. Guarded, the touch stops it (see ArmHands.place).
BESIDE_CLEARANCE = 0.003
# A block is set down sticking out this far, then pushed home: the fingers' ends 8 mm clear of the
# layer below's edge (at 6 mm less, with the old grip, the planner found them within 2 mm of it).
PLACE_OVERHANG = 0.024
PLACE_PRESS = 0.001      # the guarded descent's end below the nominal resting height
# A block held level (not by a pitched grasp) and set down home: its fingers, 10 mm thick (5 mm
# capsules) and centred on the block's 15 mm height, pass 2.4 mm over the layer below, 1.9 mm at
# the guarded descent's planned end (the guard stops it as the block lands, about 0.5 mm before).
DIRECT_FINGER_MARGIN = 0.0015
PROBE_TABLE_CLEARANCE = 0.006  # the fingertip rod pushes no lower than this above the table
# Keep-out margins (m).
TRANSIT_MARGIN = 0.02    # everything, away from the tower during transits
CONTACT_MARGIN = 0.008   # arm and body, away from the tower while the tool works at it
FINGER_MARGIN = 0.003    # fingers, while they hold a block at the tower face
MAX_JOINT_STEP = 0.15    # rad between line samples; more means IK jumped branches
TRANSIT_SEARCHES = 3     # path searches, each with its own random stream, before a transit fails
PLACE_GUARD_N = 3.0
