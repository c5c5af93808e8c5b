# gnuplot tap.gp (in this directory) redraws tap.png
set terminal pngcairo size 680,640 font 'sans,9'
set output 'tap.png'
set datafile missing 'nan'
set title "tap: frames written to a tap fd, IFF_NAPI off and on, XDP on the tap\n5 rounds; bars: median, whiskers: min-max" noenhanced
set style fill solid 0.5 border -1
set grid ytics
set yrange [0:*]
set xrange [-0.6:5.6]
set bmargin 13
set xtics rotate by -40 left noenhanced
set key top right noenhanced
set ylabel "frames written per second, ratio"
set boxwidth 0.38
plot 1 with lines dt 2 lc 'gray' notitle, 'tap.dat' using ($1-0.19):3:4:5:(0.38):xtic(2) with boxerrorbars title "× no XDP", 'tap.dat' using ($1+0.19):6:7:8:(0.38) with boxerrorbars title "× NAPI off"
